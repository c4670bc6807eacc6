/// A set of values that Apple extends without notice, stored as its raw wire value.
///
/// Every enumeration in App Store payloads (environments, product types, notification types, ...) gains
/// values over time. A conforming type keeps the raw value it was created from, so a value this version of
/// swift-iap does not know still decodes, compares and re-encodes unchanged instead of failing the whole
/// payload. ``isKnown`` tells whether the value is one of ``allKnown``.
///
/// Conforming types encode as their bare raw value (a JSON string or number) through the standard library's
/// `RawRepresentable` coding.
///
/// ## Implementation requirements
/// - ``init(rawValue:)`` accepts every raw value and never fails.
/// - ``allKnown`` lists each value Apple documents exactly once.
public protocol OpenEnumeration: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue: Hashable & Sendable & Codable {
    /// Creates a value from its wire form, known or not.
    init(rawValue: RawValue)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    static var allKnown: [Self] { get }
}

extension OpenEnumeration {
    /// Whether this version of swift-iap knows the value, that is whether it is in ``allKnown``.
    public var isKnown: Bool {
        Self.allKnown.contains(self)
    }

    /// The raw wire value, as text.
    public var description: String {
        "\(rawValue)"
    }
}
