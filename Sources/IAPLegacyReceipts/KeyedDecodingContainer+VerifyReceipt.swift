import IAPCore
extension KeyedDecodingContainer {
    /// Decodes a value that `verifyReceipt` sends as a string, but that older answers sometimes sent as a number
    /// or a Boolean; the result is always the string.
    func verifyReceiptString(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else {
            return nil
        }
        if let text = try? decode(String.self, forKey: key) {
            return text
        }
        if let number = try? decode(Int64.self, forKey: key) {
            return String(number)
        }
        if let flag = try? decode(Bool.self, forKey: key) {
            return flag ? "true" : "false"
        }
        throw DecodingError.typeMismatch(
            String.self,
            DecodingError.Context(codingPath: codingPath + [key], debugDescription: "expected a string or a number")
        )
    }
}
