#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells the kind of App Store signed data from the fields its payload carries.
enum SignedDataKindDetector {
    private struct Probe: Decodable {
        let notificationType: String?
        let notificationUUID: String?
        let receiptType: String?
        let applicationVersion: String?
        let originalApplicationVersion: String?
        let transactionId: String?
        let bundleId: String?
        let purchaseDate: Double?
        let autoRenewStatus: Int32?
        let autoRenewProductId: String?
        let renewalDate: Double?
        let expirationIntent: Int32?
        let originalTransactionId: String?
        let environment: String?
        let signedDate: Double?
    }

    static func detect(payload: [UInt8]) throws -> SignedDataKind {
        if isPlainTransaction(payload) {
            return .transaction
        }
        return try detectWithJSONDecoder(payload: payload)
    }

    /// The names of the probed fields a transaction payload does not have, quoted as in JSON.
    private static let otherKindsFields: [[UInt8]] = [
        "notificationType", "notificationUUID", "receiptType", "applicationVersion", "originalApplicationVersion",
        "autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent",
    ].map { Array("\"\($0)\"".utf8) }

    /// Whether the payload is a transaction without asking `JSONDecoder`: the fast transaction decoder reads it
    /// (so it is one flat JSON object of plain values, valid for `JSONDecoder` too, and every probed transaction
    /// field has the type the probe expects), it names the transaction, and none of the fields of the other kinds
    /// is a key of it: either every key is a transaction field (the usual payload, told without a second pass), or
    /// none of those names appears anywhere in the text, not even as a value. Anything else goes to
    /// ``detectWithJSONDecoder(payload:)``, so both always answer the same.
    static func isPlainTransaction(_ payload: [UInt8]) -> Bool {
        plainTransaction(payload) != nil
    }

    /// The transaction, decoded by ``FastTransactionDecoder``, when ``isPlainTransaction(_:)`` holds; `nil` otherwise.
    static func plainTransaction(_ payload: [UInt8]) -> TransactionPayload? {
        payload.withUnsafeBytes { bytes in
            guard let (transaction, hasUnknownKeys) = FastTransactionDecoder.decodeNotingUnknownKeys(bytes),
                transaction.transactionId != nil || transaction.bundleId != nil || transaction.purchaseDate != nil,
                // Every key a transaction field (none is a field of another kind), or none of the other kinds'
                // fields anywhere in the text.
                !hasUnknownKeys || !containsAny(otherKindsFields, in: bytes)
            else {
                return nil
            }
            return transaction
        }
    }

    /// Whether any of `names` occurs in `bytes`; each name is quoted (`"` first and last), so only the positions of a
    /// `"` are tried, and only against the names whose first letter and closing quote are there.
    private static func containsAny(_ names: [[UInt8]], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var position = 0
        while position < bytes.count,
            let quote = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position)
        {
            let offset = UnsafeRawPointer(quote) - base
            let found = names.contains { name in
                name.count >= 2 && name.count <= bytes.count - offset
                    && bytes[offset + 1] == name[1] && bytes[offset + name.count - 1] == name[name.count - 1]
                    && name.withUnsafeBytes { name in
                        name.baseAddress.map { memcmp($0, base + offset, name.count) == 0 } ?? false
                    }
            }
            if found {
                return true
            }
            position = offset + 1
        }
        return false
    }

    /// Detects the kind with `JSONDecoder`: the reference for every payload.
    static func detectWithJSONDecoder(payload: [UInt8]) throws -> SignedDataKind {
        guard CompactJWS.isJSONObject(payload) else {
            throw IAPError(.malformedSignedData, "the JWS payload is not a JSON object")
        }
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: Data(payload))
        } catch {
            throw IAPError(
                .malformedSignedData,
                "the JWS payload is not JSON of any App Store kind",
                underlying: SendableErrorBox(error)
            )
        }
        if probe.notificationType != nil || probe.notificationUUID != nil {
            return .notification
        }
        if probe.receiptType != nil || probe.applicationVersion != nil || probe.originalApplicationVersion != nil {
            return .appTransaction
        }
        if probe.transactionId != nil || probe.bundleId != nil || probe.purchaseDate != nil {
            return .transaction
        }
        if probe.autoRenewStatus != nil || probe.autoRenewProductId != nil || probe.renewalDate != nil
            || probe.expirationIntent != nil || probe.originalTransactionId != nil || probe.environment != nil
            || probe.signedDate != nil
        {
            return .renewal
        }
        throw IAPError(.unexpectedPayload, "the JWS payload has none of the fields of App Store signed data")
    }
}
