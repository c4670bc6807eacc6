extension DecodingError {
    /// Describes a decoding failure with the path of the offending field (`appAppleId`, `data[2].status`), for
    /// error messages; any other error is described as it describes itself.
    ///
    /// - Parameter error: What a `Decoder` threw.
    /// - Returns: One line that names the field and what was wrong with it.
    package static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else {
            return "\(error)"
        }
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "<root>" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(type); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context)): missing \(type); \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context, key)): missing key"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
