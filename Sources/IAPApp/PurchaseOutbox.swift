#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Everything ``PurchaseCoordinator`` must not forget, as saved in its ``PurchaseOutboxStorage``: purchases not yet
/// confirmed, purchases started and not yet completed, appAccountToken owners, refund requests and the order
/// history cache.
struct PurchaseOutbox: Sendable, Hashable, Codable {
    /// The format version this code writes and reads.
    static let currentVersion = 1

    var version = Self.currentVersion
    /// Unconfirmed purchases by transaction id.
    var entries: [String: PurchaseOutboxEntry] = [:]
    /// Purchases started in this app and not yet seen as a transaction, oldest first.
    var intents: [PurchaseIntent] = []
    /// The user each appAccountToken this app handed out belongs to.
    var tokenOwners: [String: String] = [:]
    /// The order history cache by transaction id.
    var history: [String: PurchaseHistoryItem] = [:]
    /// Whether the history cache was filled from the store's full list once.
    var historyLoaded = false
    /// Refund requests sent from this app, by transaction id, until the revocation arrives.
    var refundRequests: [String: Date] = [:]

    /// Reads saved bytes.
    ///
    /// - Throws: ``IAPError`` `.storageCorrupted` when they are not an outbox of a known version.
    static func decode(_ data: Data, source: String) throws -> PurchaseOutbox {
        let outbox: PurchaseOutbox
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            outbox = try decoder.decode(PurchaseOutbox.self, from: data)
        } catch {
            throw IAPError(
                .storageCorrupted,
                "the purchase outbox (\(source)) is damaged and was left as it is: \(error). It may hold paid "
                    + "purchases not yet delivered; keep the file for support, and the store re-delivers unfinished "
                    + "transactions at the next launch"
            )
        }
        guard outbox.version == Self.currentVersion else {
            throw IAPError(
                .storageCorrupted,
                "the purchase outbox (\(source)) has format version \(outbox.version); this version reads "
                    + "\(Self.currentVersion) and left it as it is"
            )
        }
        return outbox
    }

    /// The bytes to save.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(self)
        } catch {
            throw IAPError(.storageFailure, "the purchase outbox could not be encoded: \(error)")
        }
    }
}
