/// Whether the customer has responded to a subscription price increase.
///
/// Mirrors Apple's `PriceIncreaseStatus`, the type of the `priceIncreaseStatus` field of signed renewal
/// information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct PriceIncreaseStatus: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The customer has not responded to a price increase that needs consent (`0`).
    public static let customerHasNotResponded = PriceIncreaseStatus(rawValue: 0)
    /// The customer consented, or was told of an increase that needs no consent (`1`).
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = PriceIncreaseStatus(rawValue: 1)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [PriceIncreaseStatus] = [
        .customerHasNotResponded,
        .customerConsentedOrWasNotifiedWithoutNeedingConsent,
    ]
}
