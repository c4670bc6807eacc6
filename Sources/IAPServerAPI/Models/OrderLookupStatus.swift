public import IAPCore
/// Whether an order id names an order of the app.
///
/// Mirrors Apple's `OrderLookupStatus`, the type of the `status` field of the App Store Server API's Look Up Order
/// ID response.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// `isKnown` is `false` for it. Never `switch` exhaustively over the known values.
public struct OrderLookupStatus: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The order id is valid and has in-app purchases (`0`).
    public static let valid = OrderLookupStatus(rawValue: 0)
    /// The order id is invalid or has no in-app purchases of the app (`1`).
    public static let invalid = OrderLookupStatus(rawValue: 1)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [OrderLookupStatus] = [.valid, .invalid]
}
