#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Reads the transaction identifier out of a StoreKit 1 receipt, so that a server can move from `verifyReceipt`
/// to the App Store Server API, as Apple's `ReceiptUtility` does.
///
/// > Important: Nothing here verifies a signature. The receipt's PKCS#7 signature is **not** checked, exactly
/// > as Apple's `ReceiptUtility` does not check it, so the identifier returned is whatever the sender put there:
/// > attacker-controlled input. Never treat it as proof of purchase and never unlock anything because of it.
/// > Use it only to ask the App Store Server API (IAPServerAPI's
/// > `AppStoreServerAPIClient.transactionHistory(anyTransactionId:request:revision:)`), verify the signed
/// > transactions that come back with `AppStoreSignedDataVerifier`, and deliver what those say. See
/// > `Documentation/Migration.md`.
///
/// ```swift
/// if let id = try LegacyReceipt.transactionId(fromAppReceipt: receiptBase64) {
///     for try await page in client.transactionHistory(anyTransactionId: id) { /* verify, then deliver */ }
/// }
/// ```
///
/// The parser is a small, strict, bounds-checked BER reader written in Swift: it accepts definite and
/// indefinite lengths, constructed (segmented) OCTET STRINGs and the extra OCTET STRING that receipts made by
/// StoreKit Testing in Xcode wrap around their contents, and it rejects anything else with an ``IAPError`` of
/// code `malformedSignedData` that names the byte offset. It never traps, whatever the input.
public enum LegacyReceipt {
    /// The receipt attribute type of one in-app purchase receipt.
    static let inAppAttribute: Int64 = 17
    /// The in-app attribute type of `transaction_identifier`.
    static let transactionIdentifierAttribute: Int64 = 1703
    /// The in-app attribute type of `original_transaction_identifier`.
    static let originalTransactionIdentifierAttribute: Int64 = 1705
    /// The contents of OID 1.2.840.113549.1.7.2, PKCS#7 `signedData`.
    static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    /// The contents of OID 1.2.840.113549.1.7.1, PKCS#7 `data`.
    static let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]

    /// Extracts a transaction identifier from a base64-encoded app receipt (`Bundle.main.appStoreReceiptURL`).
    ///
    /// The receipt is read down to its in-app purchase receipts (attribute type 17), and the first
    /// `transaction_identifier` (1703) or `original_transaction_identifier` (1705) found is returned. Any
    /// transaction identifier of a customer is enough for the App Store Server API to return their whole history.
    /// White space around and inside the base64 text (line breaks) is ignored.
    ///
    /// **No signature is verified**: the result is attacker-controlled; use it only to call the App Store Server
    /// API.
    ///
    /// - Parameter appReceipt: The receipt, base64-encoded, as the app sends it.
    /// - Returns: A transaction identifier, or `nil` for a well-formed receipt without in-app purchases.
    /// - Throws: ``IAPError`` with code `malformedSignedData` when the text is not base64 or the receipt is not a
    ///   well-formed PKCS#7 app receipt.
    public static func transactionId(fromAppReceipt appReceipt: String) throws -> String? {
        let compact = String(appReceipt.unicodeScalars.filter { !Self.isBase64WhiteSpace($0) })
        guard !compact.isEmpty else {
            throw IAPError(.malformedSignedData, "the app receipt is empty")
        }
        guard let data = Data(base64Encoded: compact) else {
            throw IAPError(.malformedSignedData, "the app receipt is not valid base64")
        }
        return try transactionId(fromAppReceiptBytes: Array(data))
    }

    /// Extracts a transaction identifier from the bytes of an app receipt (the PKCS#7 file itself).
    ///
    /// **No signature is verified**: the result is attacker-controlled; use it only to call the App Store Server
    /// API.
    ///
    /// - Parameter bytes: The receipt's bytes.
    /// - Returns: A transaction identifier, or `nil` for a well-formed receipt without in-app purchases.
    /// - Throws: ``IAPError`` with code `malformedSignedData` when the bytes are not a well-formed PKCS#7 app
    ///   receipt.
    public static func transactionId(fromAppReceiptBytes bytes: [UInt8]) throws -> String? {
        let payload = try receiptPayload(bytes)
        let attributes = BERReader(payload, subject: "app receipt payload")
        for inApp in try receiptAttributes(attributes) where inApp.type == inAppAttribute {
            let record = BERReader(try attributes.octets(of: inApp.value), subject: "in-app purchase receipt")
            for field in try receiptAttributes(record)
            where field.type == transactionIdentifierAttribute || field.type == originalTransactionIdentifierAttribute {
                return try identifier(in: record, field: field)
            }
        }
        return nil
    }

    /// Reads the PKCS#7 envelope down to the receipt payload: the bytes of the encapsulated content.
    static func receiptPayload(_ bytes: [UInt8]) throws -> [UInt8] {
        let reader = BERReader(bytes, subject: "app receipt")
        let contentInfo = try reader.root()
        guard contentInfo.isUniversal(BERElement.Universal.sequence) else {
            throw reader.malformed(at: 0, "expected a PKCS#7 ContentInfo SEQUENCE, found \(contentInfo.tagDescription)")
        }
        let outer = try reader.children(of: contentInfo)
        guard let type = outer.first, reader.isObjectIdentifier(type, signedDataOID) else {
            throw reader.malformed(at: outer.first?.offset ?? 0, "the content type is not PKCS#7 signedData")
        }
        let signedData = try explicitContent(reader, outer.dropFirst().first, in: "ContentInfo", after: type)
        guard signedData.isUniversal(BERElement.Universal.sequence) else {
            throw reader.malformed(
                at: signedData.offset,
                "expected a SignedData SEQUENCE, found \(signedData.tagDescription)"
            )
        }
        let fields = try reader.children(of: signedData)
        guard fields.count >= 3 else {
            throw reader.malformed(at: signedData.offset, "SignedData has \(fields.count) fields, expected at least 3")
        }
        _ = try reader.integer(of: fields[0])
        guard fields[1].isUniversal(BERElement.Universal.set) else {
            throw reader.malformed(
                at: fields[1].offset,
                "expected the digestAlgorithms SET, found \(fields[1].tagDescription)"
            )
        }
        let encapsulated = fields[2]
        guard encapsulated.isUniversal(BERElement.Universal.sequence) else {
            throw reader.malformed(
                at: encapsulated.offset,
                "expected the encapsulated ContentInfo SEQUENCE, found \(encapsulated.tagDescription)"
            )
        }
        let inner = try reader.children(of: encapsulated)
        guard let innerType = inner.first, reader.isObjectIdentifier(innerType, dataOID) else {
            throw reader.malformed(
                at: inner.first?.offset ?? encapsulated.offset,
                "the encapsulated content type is not PKCS#7 data"
            )
        }
        let content = try explicitContent(
            reader,
            inner.dropFirst().first,
            in: "the encapsulated ContentInfo",
            after: innerType
        )
        var payload = try reader.octets(of: content)
        // StoreKit Testing in Xcode wraps the attribute SET in one more OCTET STRING.
        let nested = BERReader(payload, subject: "app receipt payload")
        if let wrapper = try? nested.root(), wrapper.isUniversal(BERElement.Universal.octetString) {
            payload = try nested.octets(of: wrapper)
        }
        return payload
    }

    /// The element inside the `[0] EXPLICIT` that must follow `previous`.
    private static func explicitContent(
        _ reader: BERReader,
        _ element: BERElement?,
        in container: String,
        after previous: BERElement
    ) throws -> BERElement {
        guard let element else {
            throw reader.malformed(at: previous.end, "\(container) has no content")
        }
        guard element.tagClass == .contextSpecific, element.tagNumber == 0, element.isConstructed else {
            throw reader.malformed(
                at: element.offset,
                "expected the [0] content of \(container), found \(element.tagDescription)"
            )
        }
        let children = try reader.children(of: element)
        guard children.count == 1, let only = children.first else {
            throw reader.malformed(
                at: element.offset,
                "the [0] content of \(container) holds \(children.count) elements, expected 1"
            )
        }
        return only
    }

    /// One receipt attribute: `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    struct Attribute {
        var type: Int64
        var value: BERElement
    }

    /// The attributes of a receipt or an in-app purchase receipt: a SET of attribute SEQUENCEs.
    static func receiptAttributes(_ reader: BERReader) throws -> [Attribute] {
        let set = try reader.root()
        guard set.isUniversal(BERElement.Universal.set) else {
            throw reader.malformed(at: 0, "expected a SET of attributes, found \(set.tagDescription)")
        }
        return try reader.children(of: set).map { entry in
            guard entry.isUniversal(BERElement.Universal.sequence) else {
                throw reader.malformed(
                    at: entry.offset,
                    "expected an attribute SEQUENCE, found \(entry.tagDescription)"
                )
            }
            let fields = try reader.children(of: entry)
            guard fields.count == 3 else {
                throw reader.malformed(at: entry.offset, "an attribute has \(fields.count) fields, expected 3")
            }
            let type = try reader.integer(of: fields[0])
            _ = try reader.integer(of: fields[1])
            guard fields[2].isUniversal(BERElement.Universal.octetString) else {
                throw reader.malformed(
                    at: fields[2].offset,
                    "the value of attribute \(type) is not an OCTET STRING but \(fields[2].tagDescription)"
                )
            }
            return Attribute(type: type, value: fields[2])
        }
    }

    /// The UTF8String inside a transaction identifier attribute.
    private static func identifier(in record: BERReader, field: Attribute) throws -> String {
        let value = BERReader(try record.octets(of: field.value), subject: "attribute \(field.type)")
        let string = try value.root()
        guard string.isUniversal(BERElement.Universal.utf8String), !string.isConstructed else {
            throw value.malformed(at: 0, "expected a UTF8String, found \(string.tagDescription)")
        }
        guard let text = String(validUTF8: value.bytes[string.contents]) else {
            throw value.malformed(at: string.contents.lowerBound, "the UTF8String is not valid UTF-8")
        }
        guard !text.isEmpty else {
            throw value.malformed(at: 0, "the transaction identifier is empty")
        }
        return text
    }

    /// Whether a scalar is white space that base64 text may be wrapped with.
    static func isBase64WhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\n" || scalar == "\r" || scalar == "\t"
    }
}
