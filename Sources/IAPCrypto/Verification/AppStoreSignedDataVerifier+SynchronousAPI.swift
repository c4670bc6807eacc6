#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

extension AppStoreSignedDataVerifier {
    /// Verifies a signed transaction.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    public func transaction(_ token: String) throws -> TransactionPayload {
        try withParsed(token) { try transaction($0, decoded: nil) }
    }

    /// Verifies a parsed signed transaction; `decoded` is its payload when the caller already decoded it with
    /// `FastTransactionDecoder` (as `decodePayload(_:as:)` would).
    private func transaction(_ jws: CompactJWS, decoded: TransactionPayload?) throws -> TransactionPayload {
        let payload = try verifiedPayload(jws, decoded: decoded) { transaction, bytes in
            // Every App Store transaction names itself; only a payload without an id can be another kind.
            if transaction.transactionId?.isEmpty ?? true {
                try Self.checkKind(bytes, expected: .transaction)
            }
        }
        try checkIdentity(bundleId: payload.bundleId, environment: payload.environment)
        return payload
    }

    /// Verifies a signed renewal info.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified renewal info.
    /// - Throws: ``IAPError`` naming the failed check.
    public func renewalInfo(_ token: String) throws -> RenewalInfoPayload {
        try withParsed(token, renewalInfo)
    }

    private func renewalInfo(_ jws: CompactJWS) throws -> RenewalInfoPayload {
        let payload = try verifiedPayload(jws, decoded: RenewalInfoPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .renewal)
        }
        // A renewal info carries no bundle id.
        try checkIdentity(bundleId: nil, environment: payload.environment, checksBundleId: false)
        return payload
    }

    /// Verifies a signed app transaction.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified app transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    public func appTransaction(_ token: String) throws -> AppTransactionPayload {
        try withParsed(token, appTransaction)
    }

    private func appTransaction(_ jws: CompactJWS) throws -> AppTransactionPayload {
        let payload = try verifiedPayload(jws, decoded: AppTransactionPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .appTransaction)
        }
        try checkIdentity(bundleId: payload.bundleId, environment: payload.receiptType)
        try checkAppAppleId(payload.appAppleId, environment: payload.receiptType)
        return payload
    }

    /// Verifies a notification's `signedPayload` and the signed data nested in it.
    ///
    /// - Parameter token: The `signedPayload`.
    /// - Returns: The verified notification.
    /// - Throws: ``IAPError`` naming the failed check.
    public func notification(_ token: String) throws -> VerifiedNotification {
        try withParsed(token, notification)
    }

    private func notification(_ jws: CompactJWS) throws -> VerifiedNotification {
        let payload = try verifiedPayload(jws, decoded: NotificationPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .notification)
        }
        let identity = Self.identity(of: payload)
        if configuration.bundleId != nil, identity.bundleId == nil {
            throw IAPError(.bundleIdMismatch, "the notification names no app (no data, summary, token or app data)")
        }
        try checkIdentity(bundleId: identity.bundleId, environment: identity.environment)
        try checkAppAppleId(identity.appAppleId, environment: identity.environment)

        var verified = VerifiedNotification(payload: payload)
        if let signed = payload.data?.signedTransactionInfo {
            let transaction = try nested("signedTransactionInfo") { try self.transaction(signed) }
            try Self.checkConsistency(
                bundleId: transaction.bundleId,
                environment: transaction.environment,
                with: identity,
                field: "signedTransactionInfo"
            )
            verified.transaction = transaction
        }
        if let signed = payload.data?.signedRenewalInfo {
            let renewal = try nested("signedRenewalInfo") { try self.renewalInfo(signed) }
            try Self.checkConsistency(
                bundleId: nil,
                environment: renewal.environment,
                with: identity,
                field: "signedRenewalInfo"
            )
            verified.renewalInfo = renewal
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            let app = try nested("signedAppTransactionInfo") { try self.appTransaction(signed) }
            try Self.checkConsistency(
                bundleId: app.bundleId,
                environment: app.receiptType,
                with: identity,
                field: "signedAppTransactionInfo"
            )
            verified.appTransaction = app
        }
        return verified
    }

    /// Verifies signed data of a given kind, or of the kind its payload shows.
    ///
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - kind: The expected kind, or `nil` to detect it from the payload's fields.
    /// - Returns: The verified data.
    /// - Throws: ``IAPError`` naming the failed check.
    public func verify(_ token: String, as kind: SignedDataKind? = nil) throws -> VerifiedSignedData {
        // The token is parsed once: the kind is told from the same decoded payload that is then verified, and a
        // plain transaction's payload, decoded to tell its kind, is not decoded again.
        try withParsed(token) { jws in
            var decoded: TransactionPayload?
            let resolved: SignedDataKind
            if let kind {
                resolved = kind
            } else if let transaction = SignedDataKindDetector.plainTransaction(jws.payload) {
                decoded = transaction
                resolved = .transaction
            } else {
                resolved = try SignedDataKindDetector.detectWithJSONDecoder(payload: jws.payload)
            }
            switch resolved {
            case .transaction: return .transaction(try transaction(jws, decoded: decoded))
            case .renewal: return .renewal(try renewalInfo(jws))
            case .notification: return .notification(try notification(jws))
            case .appTransaction: return .appTransaction(try appTransaction(jws))
            }
        }
    }

    /// Detects the kind of signed data from its payload, without verifying anything.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The kind the payload's fields show.
    /// - Throws: ``IAPError`` with code `malformedSignedData` or `unexpectedPayload`.
    public func detectKind(_ token: String) throws -> SignedDataKind {
        try withParsed(token) { try SignedDataKindDetector.detect(payload: $0.payload) }
    }
}
