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
    /// The Apple Account the history cache belongs to: the `appTransactionId` of the device's app transaction when it
    /// was filled; `nil` when unknown (filled by an older version, or the app transaction could not be read).
    var historyAccount: String?
    /// Refund requests sent from this app, by transaction id, until the revocation arrives.
    var refundRequests: [String: Date] = [:]
    /// The unreadable outboxes moved aside before this one, oldest first (the last ``maximumQuarantines``).
    var quarantines: [OutboxQuarantine] = []

    /// How many quarantines are remembered.
    static let maximumQuarantines = 20

    private enum CodingKeys: String, CodingKey {
        case version, entries, intents, tokenOwners, history, historyLoaded, historyAccount, refundRequests, quarantines
    }

    init() {}

    /// Reads an outbox; the fields later versions added may be missing, and fields this version does not know are
    /// ignored (an older app reads what a newer one wrote, as long as the version number is the same).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        entries = try container.decodeIfPresent([String: PurchaseOutboxEntry].self, forKey: .entries) ?? [:]
        intents = try container.decodeIfPresent([PurchaseIntent].self, forKey: .intents) ?? []
        tokenOwners = try container.decodeIfPresent([String: String].self, forKey: .tokenOwners) ?? [:]
        history = try container.decodeIfPresent([String: PurchaseHistoryItem].self, forKey: .history) ?? [:]
        historyLoaded = try container.decodeIfPresent(Bool.self, forKey: .historyLoaded) ?? false
        historyAccount = try container.decodeIfPresent(String.self, forKey: .historyAccount)
        refundRequests = try container.decodeIfPresent([String: Date].self, forKey: .refundRequests) ?? [:]
        quarantines = try container.decodeIfPresent([OutboxQuarantine].self, forKey: .quarantines) ?? []
    }

    /// Reads saved bytes.
    ///
    /// - Throws: ``IAPError`` `.storageCorrupted` when they are not an outbox of the version this code reads: damaged
    ///   bytes, or another format version (a newer app wrote them).
    static func decode(_ data: Data, source: String) throws -> PurchaseOutbox {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let version: Int?
        do {
            version = try decoder.decode(VersionProbe.self, from: data).version
        } catch {
            throw IAPError(.storageCorrupted, "the purchase outbox (\(source)) is damaged: \(error)")
        }
        guard let version else {
            throw IAPError(.storageCorrupted, "the purchase outbox (\(source)) is damaged: it has no format version")
        }
        guard version == Self.currentVersion else {
            throw IAPError(
                .storageCorrupted,
                "the purchase outbox (\(source)) has format version \(version), written by "
                    + (version > Self.currentVersion ? "a newer" : "an older")
                    + " version of the app; this version reads \(Self.currentVersion)"
            )
        }
        do {
            return try decoder.decode(PurchaseOutbox.self, from: data)
        } catch {
            throw IAPError(.storageCorrupted, "the purchase outbox (\(source)) is damaged: \(error)")
        }
    }

    /// The format version of saved bytes, read before anything else.
    private struct VersionProbe: Decodable {
        var version: Int?
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
