#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

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
