/// Whether the customer bought the product or has access to it through Family Sharing.
///
/// Mirrors Apple's `InAppOwnershipType`, the type of the `inAppOwnershipType` field of a signed transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct InAppOwnershipType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The transaction belongs to a family member who shares it (`FAMILY_SHARED`).
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")
    /// The customer bought the product (`PURCHASED`).
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [InAppOwnershipType] = [
        .familyShared,
        .purchased,
    ]
}
