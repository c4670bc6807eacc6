/// The App Store environment that produced a piece of signed data.
///
/// Mirrors Apple's `Environment`, the type of the `environment` field of transactions, renewal information and
/// notifications, and the `receiptType` of an app transaction. `xcode` and `localTesting` data is not signed by
/// Apple's production PKI.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct AppStoreEnvironment: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The sandbox environment used by TestFlight and sandbox accounts (`Sandbox`).
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// The production App Store (`Production`).
    public static let production = AppStoreEnvironment(rawValue: "Production")
    /// StoreKit Testing in Xcode (`Xcode`).
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's local testing environment for server libraries (`LocalTesting`).
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [AppStoreEnvironment] = [
        .sandbox,
        .production,
        .xcode,
        .localTesting,
    ]
}
