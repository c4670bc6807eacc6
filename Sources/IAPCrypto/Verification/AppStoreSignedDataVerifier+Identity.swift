#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension AppStoreSignedDataVerifier {
    struct Identity {
        var bundleId: String?
        var environment: AppStoreEnvironment?
        var appAppleId: Int64?
    }

    static func identity(of payload: NotificationPayload) -> Identity {
        if let data = payload.data {
            return Identity(bundleId: data.bundleId, environment: data.environment, appAppleId: data.appAppleId)
        }
        if let summary = payload.summary {
            return Identity(
                bundleId: summary.bundleId,
                environment: summary.environment,
                appAppleId: summary.appAppleId
            )
        }
        if let token = payload.externalPurchaseToken {
            return Identity(
                bundleId: token.bundleId,
                environment: token.derivedEnvironment,
                appAppleId: token.appAppleId
            )
        }
        if let appData = payload.appData {
            return Identity(
                bundleId: appData.bundleId,
                environment: appData.environment,
                appAppleId: appData.appAppleId
            )
        }
        return Identity()
    }

    func checkIdentity(
        bundleId: String?,
        environment: AppStoreEnvironment?,
        checksBundleId: Bool = true
    ) throws {
        if checksBundleId, let expected = configuration.bundleId, bundleId != expected {
            throw IAPError(
                .bundleIdMismatch,
                "the data is for bundle id '\(bundleId ?? "none")', expected '\(expected)'"
            )
        }
        if !configuration.environments.isEmpty, !(environment.map(configuration.environments.contains) ?? false) {
            throw IAPError(
                .environmentMismatch,
                "the data is from the \(environment?.rawValue ?? "unnamed") environment, expected "
                    + configuration.environments.map(\.rawValue).sorted().joined(separator: " or ")
            )
        }
    }

    func checkAppAppleId(_ appAppleId: Int64?, environment: AppStoreEnvironment?) throws {
        guard let expected = configuration.appAppleId else { return }
        if let appAppleId {
            guard appAppleId == expected else {
                throw IAPError(.appAppleIdMismatch, "the data is for App Apple ID \(appAppleId), expected \(expected)")
            }
        } else if environment == .production {
            throw IAPError(.appAppleIdMismatch, "Production data must name its App Apple ID, expected \(expected)")
        }
    }

    static func checkConsistency(
        bundleId: String?,
        environment: AppStoreEnvironment?,
        with identity: Identity,
        field: String
    ) throws {
        if let bundleId, let outer = identity.bundleId, bundleId != outer {
            throw IAPError(
                .bundleIdMismatch,
                "\(field) is for bundle id '\(bundleId)' but the notification is for '\(outer)'"
            )
        }
        if let environment, let outer = identity.environment, environment != outer {
            throw IAPError(
                .environmentMismatch,
                "\(field) is from \(environment.rawValue) but the notification is from \(outer.rawValue)"
            )
        }
    }

    func nested<T>(_ field: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as IAPError {
            error.message = "\(field): \(error.message)"
            throw error
        }
    }

    static func isUnsigned(_ environment: AppStoreEnvironment) -> Bool {
        environment == .xcode || environment == .localTesting
    }

    func isUnsignedEnvironment(_ payload: some SignedPayload) -> Bool {
        let environment: AppStoreEnvironment? =
            switch payload {
            case let transaction as TransactionPayload: transaction.environment
            case let renewal as RenewalInfoPayload: renewal.environment
            case let app as AppTransactionPayload: app.receiptType
            case let notification as NotificationPayload: Self.identity(of: notification).environment
            default: nil
            }
        return environment.map(Self.isUnsigned) ?? false
    }

    /// Throws unless the payload is of the expected kind, naming both.
    static func checkKind(_ payload: [UInt8], expected: SignedDataKind) throws {
        let found = try? SignedDataKindDetector.detect(payload: payload)
        guard found == expected else {
            try refuseKind(payload, expected: expected, found: found)
            return
        }
    }

    private static func refuseKind(_ payload: [UInt8], expected: SignedDataKind, found: SignedDataKind?) throws {
        throw IAPError(
            .unexpectedPayload,
            "expected \(article(expected)) \(expected.displayName), got "
                + (found.map { "\(article($0)) \($0.displayName)" } ?? "a payload of no App Store kind")
        )
    }

    private static func article(_ kind: SignedDataKind) -> String {
        kind == .appTransaction ? "an" : "a"
    }

    static func kindName<Payload>(_ type: Payload.Type) -> String {
        switch type {
        case is TransactionPayload.Type: "transaction"
        case is RenewalInfoPayload.Type: "renewal info"
        case is NotificationPayload.Type: "notification"
        case is AppTransactionPayload.Type: "app transaction"
        default: "payload"
        }
    }

    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map(\.stringValue).joined(separator: ".")
            return joined.isEmpty ? "" : " at '\(joined)'"
        }
        switch decoding {
        case .typeMismatch(_, let context): return "wrong type\(path(context)): \(context.debugDescription)"
        case .valueNotFound(_, let context): return "missing value\(path(context))"
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'\(path(context))"
        case .dataCorrupted(let context): return "invalid JSON\(path(context)): \(context.debugDescription)"
        @unknown default: return String(describing: error)
        }
    }
}
