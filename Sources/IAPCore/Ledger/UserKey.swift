/// A user id as the ledger keys it: by its UTF-8 bytes.
///
/// Swift's `String` equality and hashing follow Unicode canonical equivalence: `"m\u{00FC}ller"` (NFC) equals
/// `"mu\u{0308}ller"` (NFD), and `"\u{212A}"` (KELVIN SIGN) equals `"K"`. A user id is the integrator's opaque key (a
/// username, an e-mail address, a database key), whose bytes decide who is who: two ids are one user only when their
/// UTF-8 bytes are equal. Every index and every comparison of user ids in the ledger goes through this type or
/// ``Swift/String/isSameUser(as:)``; nothing normalizes an id.
package struct UserKey: Hashable, Sendable {
    /// The user id, exactly as given.
    package let id: String

    /// Keys a user id by its bytes.
    ///
    /// - Parameter id: The user id.
    package init(_ id: String) {
        self.id = id
    }

    package static func == (lhs: UserKey, rhs: UserKey) -> Bool {
        lhs.id.isSameUser(as: rhs.id)
    }

    package func hash(into hasher: inout Hasher) {
        var id = id
        id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension String {
    /// Whether two user ids name the same user: their UTF-8 bytes are equal (never canonical equivalence, which
    /// `==` follows).
    ///
    /// - Parameter other: The other user id.
    /// - Returns: `true` when the bytes are equal.
    package func isSameUser(as other: String) -> Bool {
        // The counts first (free for a native string), then the bytes in place: a pool compares millions of ids.
        guard utf8.count == other.utf8.count else {
            return false
        }
        var left = self
        var right = other
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in leftBytes.elementsEqual(rightBytes) }
        }
    }
}

extension Optional where Wrapped == String {
    /// Whether two optional user ids name the same user: both `nil`, or both ids with equal UTF-8 bytes.
    ///
    /// - Parameter other: The other user id.
    /// - Returns: `true` when both are absent or their bytes are equal.
    package func isSameUser(as other: String?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let one?, let two?): one.isSameUser(as: two)
        default: false
        }
    }
}
