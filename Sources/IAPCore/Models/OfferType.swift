/// The kind of subscription offer that applies to a transaction or renewal.
///
/// Mirrors Apple's `OfferType`, the type of the `offerType` field of signed transactions and renewal information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct OfferType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// An introductory offer (`1`).
    public static let introductoryOffer = OfferType(rawValue: 1)
    /// A promotional offer (`2`).
    public static let promotionalOffer = OfferType(rawValue: 2)
    /// An offer with a subscription offer code (`3`).
    public static let offerCode = OfferType(rawValue: 3)
    /// A win-back offer (`4`).
    public static let winBackOffer = OfferType(rawValue: 4)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [OfferType] = [
        .introductoryOffer,
        .promotionalOffer,
        .offerCode,
        .winBackOffer,
    ]
}
