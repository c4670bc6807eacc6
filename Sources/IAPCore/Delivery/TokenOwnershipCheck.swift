#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Tells whether an appAccountToken can belong to a user, before any user has claimed it.
///
/// An appAccountToken that no user has claimed goes, without a check, to the first user who presents its signed
/// transaction, and a signed transaction is not secret (it sits in the app's outbox, in logs, in support tickets).
/// A server whose apps derive the token from the user (``AppAccountToken/derive(from:namespace:)``) can tell whose a
/// token is without storing anything: ``derived(namespace:)`` refuses a token derived from another user, so a thief
/// holding the transaction cannot claim it even before its owner submits.
///
/// A token that is already bound (``EntitlementStore/bind(appAccountToken:to:)``) is decided by its binding, not by
/// the check: bindings made before the check was turned on stay valid. Apps that make a random token per order bind
/// it to the user when the order is created, before the purchase, and need no check.
///
/// ```swift
/// let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10")!  // the apps' namespace
/// let check = TokenOwnershipCheck.derived(namespace: namespace)
/// ```
public struct TokenOwnershipCheck: Sendable {
    private let check: @Sendable (UUID, String) -> Bool

    /// Creates a check from a function.
    ///
    /// - Parameter check: Whether `token` can belong to `userId`; `false` refuses the claim with
    ///   ``IAPError/Code/ownershipConflict``.
    public init(_ check: @escaping @Sendable (_ token: UUID, _ userId: String) -> Bool) {
        self.check = check
    }

    /// Accepts exactly the tokens derived from the user in `namespace`, as
    /// ``AppAccountToken/derive(from:namespace:)`` derives them.
    ///
    /// - Parameter namespace: The namespace the apps derive their tokens in.
    /// - Returns: The check.
    public static func derived(namespace: UUID) -> TokenOwnershipCheck {
        TokenOwnershipCheck { token, userId in
            AppAccountToken.derive(from: userId, namespace: namespace) == token
        }
    }

    /// Whether `token` can belong to `userId`.
    ///
    /// - Parameters:
    ///   - token: The transaction's appAccountToken.
    ///   - userId: The user who claims it.
    /// - Returns: `true` when the user may claim the token.
    public func allows(_ token: UUID, for userId: String) -> Bool {
        check(token, userId)
    }
}
