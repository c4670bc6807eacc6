/// The header fields of a request or a response, in the order they came, names compared without case.
///
/// A name may repeat: ``values(for:)`` returns every value, ``subscript(_:)`` the first. A server that makes a
/// security decision on a header (a token, `Host`, `Origin`) should refuse a request that repeats it rather than
/// pick one: two readers of one request must never see different values.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name, as sent.
        public var name: String
        /// The value, without leading or trailing whitespace.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates headers from fields, in order.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Creates headers from name-value pairs, in order; a name may repeat.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of a header, or `nil` when it is absent.
    ///
    /// - Parameter name: The name, in any case.
    public subscript(_ name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of a header, in order.
    ///
    /// - Parameter name: The name, in any case.
    /// - Returns: The values; empty when the header is absent.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Whether the header is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.same($0.name, name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Adds a field after the others.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field of a name with one field, or removes them all when `value` is `nil`.
    public mutating func replace(_ name: String, with value: String?) {
        fields.removeAll { Self.same($0.name, name) }
        if let value {
            fields.append(Field(name: name, value: value))
        }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    private static func same(_ first: String, _ second: String) -> Bool {
        first.utf8.count == second.utf8.count && first.lowercased() == second.lowercased()
    }
}
