#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension LegacyReceipt {
    /// Extracts the transaction identifier from a base64-encoded transaction receipt, the iOS 6-era
    /// `SKPaymentTransaction.transactionReceipt`.
    ///
    /// The receipt is base64 of a text property list; its `"purchase-info" = "…";` entry is base64 of another
    /// one, whose `"transaction-id" = "…";` entry is returned. The two entries are matched as Apple's
    /// `ReceiptUtility` matches them: `"key"`, white space, `=`, white space, a quoted run of base64
    /// characters, `;`.
    ///
    /// **No signature is verified**: the result is attacker-controlled; use it only to call the App Store Server
    /// API. Unlike Apple's utility, which returns `nil`, a receipt without a transaction identifier throws: every
    /// genuine transaction receipt has one.
    ///
    /// - Parameter transactionReceipt: The receipt, base64-encoded.
    /// - Returns: The transaction identifier.
    /// - Throws: ``IAPError`` with code `malformedSignedData` naming the layer that is not as expected.
    public static func transactionId(fromTransactionReceipt transactionReceipt: String) throws -> String {
        let outer = try decodeText(transactionReceipt, what: "transaction receipt")
        guard let purchaseInfo = quotedValue(of: "purchase-info", in: outer) else {
            throw IAPError(
                .malformedSignedData,
                #"the transaction receipt has no "purchase-info" = "<base64>"; entry"#
            )
        }
        let inner = try decodeText(purchaseInfo, what: "purchase-info of the transaction receipt")
        guard let transactionId = quotedValue(of: "transaction-id", in: inner) else {
            throw IAPError(
                .malformedSignedData,
                #"the purchase-info of the transaction receipt has no "transaction-id" = "<value>"; entry"#
            )
        }
        return transactionId
    }

    /// Decodes base64 text (white space ignored) into UTF-8 text.
    private static func decodeText(_ base64: String, what: String) throws -> String {
        let compact = String(base64.unicodeScalars.filter { !isBase64WhiteSpace($0) })
        guard !compact.isEmpty else {
            throw IAPError(.malformedSignedData, "the \(what) is empty")
        }
        guard let data = Data(base64Encoded: compact) else {
            throw IAPError(.malformedSignedData, "the \(what) is not valid base64")
        }
        guard let text = String(validUTF8: data) else {
            throw IAPError(.malformedSignedData, "the \(what) is not UTF-8 text")
        }
        return text
    }

    /// The value of the first `"key" = "value";` entry whose value is made of base64 characters, matched as the
    /// regular expression `"key"\s+=\s+"([a-zA-Z0-9+/=]+)";`.
    static func quotedValue(of key: String, in text: String) -> String? {
        let scalars = Array(text.unicodeScalars)
        let needle = Array("\"\(key)\"".unicodeScalars)
        guard scalars.count >= needle.count else {
            return nil
        }
        var start = 0
        while start + needle.count <= scalars.count {
            defer { start += 1 }
            guard scalars[start..<(start + needle.count)].elementsEqual(needle) else {
                continue
            }
            var cursor = start + needle.count
            func skipWhiteSpace() -> Bool {
                let before = cursor
                while cursor < scalars.count, scalars[cursor].properties.isWhitespace {
                    cursor += 1
                }
                return cursor > before
            }
            func take(_ scalar: Unicode.Scalar) -> Bool {
                guard cursor < scalars.count, scalars[cursor] == scalar else {
                    return false
                }
                cursor += 1
                return true
            }
            guard skipWhiteSpace(), take("="), skipWhiteSpace(), take("\"") else {
                continue
            }
            let valueStart = cursor
            while cursor < scalars.count, isBase64Character(scalars[cursor]) {
                cursor += 1
            }
            let valueEnd = cursor
            guard valueEnd > valueStart, take("\""), take(";") else {
                continue
            }
            var value = String.UnicodeScalarView()
            value.append(contentsOf: scalars[valueStart..<valueEnd])
            return String(value)
        }
        return nil
    }

    private static func isBase64Character(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "+", "/", "=": return true
        default: return false
        }
    }
}
