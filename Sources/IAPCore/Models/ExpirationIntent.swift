/// Why a subscription expired.
///
/// Mirrors Apple's `ExpirationIntent`, the type of the `expirationIntent` field of signed renewal information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct ExpirationIntent: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The customer cancelled the subscription (`1`).
    public static let customerCancelled = ExpirationIntent(rawValue: 1)
    /// A billing error occurred (`2`).
    public static let billingError = ExpirationIntent(rawValue: 2)
    /// The customer did not consent to a price increase (`3`).
    public static let customerDidNotConsentToPriceIncrease = ExpirationIntent(rawValue: 3)
    /// The product was not available at renewal (`4`).
    public static let productNotAvailable = ExpirationIntent(rawValue: 4)
    /// Another reason (`5`).
    public static let other = ExpirationIntent(rawValue: 5)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [ExpirationIntent] = [
        .customerCancelled,
        .billingError,
        .customerDidNotConsentToPriceIncrease,
        .productNotAvailable,
        .other,
    ]
}
