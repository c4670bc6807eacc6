public import IAPCore
/// The refund outcome the developer prefers for a refund request.
///
/// Mirrors Apple's `RefundPreference`, the type of the `refundPreference` field of a consumption request (version
/// 2).
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and ``isKnown`` is `false`
/// for it. Never `switch` exhaustively over the known values.
public struct RefundPreference: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Prefer that the App Store declines the refund (`DECLINE`).
    public static let decline = RefundPreference(rawValue: "DECLINE")
    /// Prefer that the App Store grants a full refund (`GRANT_FULL`).
    public static let grantFull = RefundPreference(rawValue: "GRANT_FULL")
    /// Prefer that the App Store grants a prorated refund (`GRANT_PRORATED`).
    public static let grantProrated = RefundPreference(rawValue: "GRANT_PRORATED")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [RefundPreference] = [
        .decline,
        .grantFull,
        .grantProrated,
    ]
}
