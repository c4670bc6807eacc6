/// The description and display name of an Advanced Commerce purchase.
///
/// Mirrors Apple's `AdvancedCommerceDescriptors`. Both fields are optional here (Apple requires them in requests)
/// so that decoding a payload never fails on them.
public struct AdvancedCommerceDescriptors: Codable, Hashable, Sendable {
    /// The description shown to the customer.
    public var description: String?
    /// The display name shown to the customer.
    public var displayName: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        description: String? = nil,
        displayName: String? = nil
    ) {
        self.description = description
        self.displayName = displayName
    }
}
