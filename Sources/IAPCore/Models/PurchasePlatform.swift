/// The platform on which the customer first bought the app.
///
/// Mirrors Apple's `PurchasePlatform`, the type of the `originalPlatform` field of an app transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct PurchasePlatform: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// iOS, iPadOS, or a Mac with Apple silicon running the iOS app (`iOS`).
    public static let iOS = PurchasePlatform(rawValue: "iOS")
    /// macOS (`macOS`).
    public static let macOS = PurchasePlatform(rawValue: "macOS")
    /// tvOS (`tvOS`).
    public static let tvOS = PurchasePlatform(rawValue: "tvOS")
    /// visionOS (`visionOS`).
    public static let visionOS = PurchasePlatform(rawValue: "visionOS")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [PurchasePlatform] = [
        .iOS,
        .macOS,
        .tvOS,
        .visionOS,
    ]
}
