/// Whether an auto-renewable subscription renews at the end of its period.
///
/// Mirrors Apple's `AutoRenewStatus`, the type of the `autoRenewStatus` field of signed renewal information and
/// `commitmentAutoRenewStatus` of commitment information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct AutoRenewStatus: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Automatic renewal is off (`0`).
    public static let off = AutoRenewStatus(rawValue: 0)
    /// Automatic renewal is on (`1`).
    public static let on = AutoRenewStatus(rawValue: 1)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [AutoRenewStatus] = [
        .off,
        .on,
    ]
}
