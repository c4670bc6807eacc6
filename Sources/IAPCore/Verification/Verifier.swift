/// Turns App Store signed data into verified, decoded payloads.
///
/// A `Verifier` is the only way signed data enters swift-iap: the delivery pipeline, the notification
/// processor and the reconciler all take one. The production implementation is
/// `AppStoreSignedDataVerifier` in `IAPCrypto`, which checks the JWS signature, the `x5c` certificate
/// chain up to Apple Root CA - G3, Apple's marker extensions, and the app's identity.
///
/// ## Implementation requirements
/// - Return a payload only after every check passed; otherwise throw an ``IAPError`` whose code names
///   the failed check (``IAPError/Code/signatureInvalid``, ``IAPError/Code/untrustedRoot``,
///   ``IAPError/Code/bundleIdMismatch``, ...). Never return a partly verified payload.
/// - Never accept everything: there is no "skip verification" mode, not even for tests. Tests sign
///   with a test PKI (`TestPKI` in `IAPCrypto`) and configure its root.
/// - ``verifyNotification(_:)`` also verifies the transaction, renewal info and app transaction that
///   are nested in the notification as signed data of their own.
/// - Safe to call from many tasks at once.
public protocol Verifier: Sendable {
    /// Verifies a signed transaction (`JWSTransaction`).
    ///
    /// - Parameter signedTransaction: The compact JWS, as StoreKit's `jwsRepresentation` or the App Store
    ///   Server API returns it.
    /// - Returns: The verified, decoded transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload

    /// Verifies a signed subscription renewal info (`JWSRenewalInfo`).
    ///
    /// - Parameter signedRenewalInfo: The compact JWS.
    /// - Returns: The verified, decoded renewal info.
    /// - Throws: ``IAPError`` naming the failed check.
    func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload

    /// Verifies an App Store Server Notification V2 `signedPayload` and the signed data nested in it.
    ///
    /// - Parameter signedPayload: The `signedPayload` field of the notification's JSON body.
    /// - Returns: The verified notification with its verified nested transaction, renewal info and app transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification

    /// Verifies a signed app transaction (`AppTransaction`).
    ///
    /// - Parameter signedAppTransaction: The compact JWS.
    /// - Returns: The verified, decoded app transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload

    /// The App Store environments whose data this verifier accepts, or `nil` when it does not say (it checks no
    /// environment, or cannot tell).
    ///
    /// The ``DeliveryPipeline`` reads it to know whether it runs on a production server (one that accepts
    /// Production data), where its ``SandboxPolicy`` decides what sandbox purchases get. The default is `nil`.
    var acceptedEnvironments: Set<AppStoreEnvironment>? { get }

    /// The App Store environments whose data of one app this verifier accepts, or `nil` when it does not say.
    ///
    /// A verifier of several apps (``AppRoutingVerifier``) answers for the app with this bundle id; the
    /// ``DeliveryPipeline`` asks it, per purchase, whether the purchase's app runs on a production server. The
    /// default is ``acceptedEnvironments``.
    ///
    /// - Parameter bundleId: The bundle id of the data, or `nil` when it names none.
    func acceptedEnvironments(bundleId: String?) -> Set<AppStoreEnvironment>?

    /// The apps (bundle ids) whose data this verifier accepts, or `nil` when it does not say.
    ///
    /// The ``DeliveryPipeline`` delivers the entries of these apps only when it drains a shared ledger: an entry of
    /// another app is left to a deliverer of that app (its catalog says what the purchase is). The default is `nil`:
    /// every entry.
    var bundleIds: Set<String>? { get }
}

extension Verifier {
    /// `nil`: the verifier does not say which environments it accepts.
    public var acceptedEnvironments: Set<AppStoreEnvironment>? { nil }

    /// ``acceptedEnvironments``: a verifier of one app accepts the same environments whatever the data.
    public func acceptedEnvironments(bundleId: String?) -> Set<AppStoreEnvironment>? { acceptedEnvironments }

    /// `nil`: the verifier does not say which apps it accepts.
    public var bundleIds: Set<String>? { nil }
}
