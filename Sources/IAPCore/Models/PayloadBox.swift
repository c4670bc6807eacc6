/// An immutable value kept out of line, coded as the value itself.
///
/// Used for the rarely present nested objects of a payload, so that a payload without them stays small.
final class PayloadBox<Value: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Value.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    static func == (lhs: PayloadBox, rhs: PayloadBox) -> Bool {
        lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
