#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Verifies the signed data of several apps: each piece goes to the verifier of the app it names.
///
/// A server that serves several apps of one team (a free and a pro app, an iPad app) verifies each app's data with
/// that app's verifier: its bundle id, its environments, its roots. This verifier reads the bundle id a piece of
/// signed data names (a transaction's and an app transaction's `bundleId`; a notification's `data`, `summary`,
/// `externalPurchaseToken` or `appData`), hands the data to that app's verifier, and answers what it answers. The
/// name is read before anything is verified, so it only chooses: the chosen verifier checks everything again,
/// the bundle id included, and data that names an app this server does not serve is refused with
/// ``IAPError/Code/bundleIdMismatch`` before any verifier sees it.
///
/// A renewal info names no app (Apple's `JWSRenewalInfo` has no bundle id): it is verified by the first verifier, in
/// bundle id order, that accepts it, and refused with the first one's error when none does. Renewal infos reach a
/// server nested in a notification, which names its app, or from the App Store Server API on behalf of an app.
///
/// ```swift
/// let verifier = try AppRoutingVerifier(["com.example.free": freeVerifier, "com.example.pro": proVerifier])
/// ```
public struct AppRoutingVerifier: Verifier {
    /// The verifier of each app, by bundle id.
    public let verifiers: [String: any Verifier]
    private let order: [String]

    /// Creates a verifier over the verifiers of several apps.
    ///
    /// - Parameter verifiers: The verifier of each app, by bundle id; each must check that bundle id.
    /// - Throws: ``IAPError`` `invalidConfiguration` when there is no app, or a bundle id is empty.
    public init(_ verifiers: [String: any Verifier]) throws {
        guard !verifiers.isEmpty else {
            throw IAPError(.invalidConfiguration, "a verifier of several apps needs at least one app")
        }
        if verifiers.keys.contains(where: { $0.isEmpty }) {
            throw IAPError(.invalidConfiguration, "a bundle id of a verifier of several apps is empty")
        }
        self.verifiers = verifiers
        self.order = verifiers.keys.sorted()
    }

    /// The bundle ids served, sorted.
    public var servedBundleIds: [String] { order }

    /// The bundle ids served.
    public var bundleIds: Set<String>? { Set(order) }

    public func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
        try await verifier(for: signedTransaction, kind: "transaction").verifyTransaction(signedTransaction)
    }

    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        try await verifier(for: signedPayload, kind: "notification").verifyNotification(signedPayload)
    }

    public func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        try await verifier(for: signedAppTransaction, kind: "app transaction").verifyAppTransaction(
            signedAppTransaction
        )
    }

    public func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
        var firstError: (any Error)?
        for bundleId in order {
            guard let verifier = verifiers[bundleId] else { continue }
            do {
                return try await verifier.verifyRenewalInfo(signedRenewalInfo)
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? IAPError(.invalidConfiguration, "a verifier of several apps has no app")
    }

    /// Every environment some app accepts, or `nil` when an app's verifier does not say.
    public var acceptedEnvironments: Set<AppStoreEnvironment>? {
        var union = Set<AppStoreEnvironment>()
        for bundleId in order {
            guard let accepted = verifiers[bundleId]?.acceptedEnvironments else { return nil }
            union.formUnion(accepted)
        }
        return union
    }

    /// The environments the app with this bundle id accepts; every app's together for data that names no app
    /// this verifier serves.
    public func acceptedEnvironments(bundleId: String?) -> Set<AppStoreEnvironment>? {
        guard let bundleId, let verifier = verifiers[bundleId] else { return acceptedEnvironments }
        return verifier.acceptedEnvironments(bundleId: bundleId)
    }

    /// The bundle id a piece of signed data names, read without verifying it: for routing and for labels only (the
    /// data may be forged; only a verifier says whether it is the app's).
    ///
    /// - Parameter signedData: A compact JWS (a transaction, an app transaction, a notification's `signedPayload`).
    /// - Returns: The bundle id it names, or `nil` when it is not a JWS or names none.
    public static func bundleId(ofUnverified signedData: String) -> String? {
        SignedDataApp.bundleId(ofUnverified: signedData)
    }

    /// The verifier of the app the signed data names.
    private func verifier(for signedData: String, kind: String) throws -> any Verifier {
        let named = SignedDataApp.bundleId(ofUnverified: signedData)
        guard let named else {
            throw IAPError(
                .bundleIdMismatch,
                "the signed \(kind) names no app; this server serves \(order.joined(separator: ", "))"
            )
        }
        guard let verifier = verifiers[named] else {
            throw IAPError(
                .bundleIdMismatch,
                "the signed \(kind) is for bundle id '\(named)', which this server does not serve "
                    + "(it serves \(order.joined(separator: ", ")))"
            )
        }
        return verifier
    }
}

/// Reads which app a piece of signed data names, without verifying it: for routing only.
enum SignedDataApp {
    /// The most bytes of a payload read for its bundle id; a larger one names none.
    static let maximumPayloadBytes = 1 << 20

    /// The bundle id the payload of a compact JWS names: its own `bundleId`, or that of its `data`, `summary`,
    /// `externalPurchaseToken` or `appData`; `nil` when it is not a JWS or names none.
    static func bundleId(ofUnverified compact: String) -> String? {
        let segments = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, segments[1].count <= maximumPayloadBytes * 4 / 3 + 4,
            let bytes = Base64.decodeURL(Substring(segments[1])),
            let named = try? JSONDecoder().decode(NamedApp.self, from: Data(bytes))
        else { return nil }
        let candidates = [
            named.bundleId, named.data?.bundleId, named.summary?.bundleId, named.externalPurchaseToken?.bundleId,
            named.appData?.bundleId,
        ]
        return candidates.lazy.compactMap { $0 }.first { !$0.isEmpty }
    }

    private struct NamedApp: Decodable {
        var bundleId: String?
        var data: Nested?
        var summary: Nested?
        var externalPurchaseToken: Nested?
        var appData: Nested?
    }

    private struct Nested: Decodable {
        var bundleId: String?
    }
}
