extension String {
    /// Decodes bytes that must be valid UTF-8; `nil` when they are not (the standard library's
    /// `String(validating:as:)` needs iOS 18 and macOS 15, above the package's floor).
    ///
    /// - Parameter bytes: The bytes.
    package init?(validUTF8 bytes: some Collection<UInt8>) {
        let decoded = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces every invalid sequence with U+FFFD, so the bytes come back unchanged only when valid.
        guard decoded.utf8.elementsEqual(bytes) else { return nil }
        self = decoded
    }
}
