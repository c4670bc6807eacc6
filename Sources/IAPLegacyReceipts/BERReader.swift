import IAPCore
/// A small, strict, bounds-checked reader of BER (and so DER) data.
///
/// It reads the subset of X.690 that App Store receipts use: low and high tag numbers, definite lengths in
/// short or long form (up to four length octets), indefinite lengths on constructed elements closed by
/// end-of-contents octets, and constructed OCTET STRINGs made of segments. Every offset is checked against the
/// bounds of the input, nesting is limited to ``maximumDepth`` levels, and any violation throws
/// ``IAPError`` with code `malformedSignedData` and a message that names the byte offset. It never traps,
/// whatever the bytes.
struct BERReader: Sendable {
    /// How deeply indefinite-length elements may nest before the input is rejected.
    static let maximumDepth = 32

    /// The input.
    let bytes: [UInt8]
    /// What the input is, for error messages, such as `"app receipt"`.
    let subject: String

    /// Creates a reader over some bytes.
    init(_ bytes: [UInt8], subject: String) {
        self.bytes = bytes
        self.subject = subject
    }

    /// Reads the single element that fills the whole input.
    ///
    /// - Throws: ``IAPError`` when the input is not exactly one well-formed element.
    func root() throws -> BERElement {
        let element = try element(at: 0, limit: bytes.count, depth: 0)
        guard element.end == bytes.count else {
            throw malformed(at: element.end, "\(bytes.count - element.end) bytes follow the top-level element")
        }
        return element
    }

    /// The elements inside a constructed element, in order.
    ///
    /// - Throws: ``IAPError`` when the element is primitive or its contents are not well-formed elements.
    func children(of parent: BERElement) throws -> [BERElement] {
        guard parent.isConstructed else {
            throw malformed(
                at: parent.offset,
                "expected a constructed element, found a primitive \(parent.tagDescription)"
            )
        }
        var result: [BERElement] = []
        var offset = parent.contents.lowerBound
        while offset < parent.contents.upperBound {
            let child = try element(at: offset, limit: parent.contents.upperBound, depth: 1)
            result.append(child)
            offset = child.end
        }
        return result
    }

    /// The bytes of an OCTET STRING, joining the segments of a constructed one.
    ///
    /// - Throws: ``IAPError`` when the element is not an OCTET STRING or a segment is not one.
    func octets(of element: BERElement, depth: Int = 0) throws -> [UInt8] {
        guard element.isUniversal(BERElement.Universal.octetString) else {
            throw malformed(at: element.offset, "expected an OCTET STRING, found \(element.tagDescription)")
        }
        guard element.isConstructed else {
            return Array(bytes[element.contents])
        }
        guard depth < Self.maximumDepth else {
            throw malformed(at: element.offset, "OCTET STRING segments nest more than \(Self.maximumDepth) levels")
        }
        var result: [UInt8] = []
        for segment in try children(of: element) {
            result += try octets(of: segment, depth: depth + 1)
        }
        return result
    }

    /// The value of an INTEGER that fits in 64 bits.
    ///
    /// - Throws: ``IAPError`` when the element is not a primitive INTEGER or does not fit.
    func integer(of element: BERElement) throws -> Int64 {
        guard element.isUniversal(BERElement.Universal.integer), !element.isConstructed else {
            throw malformed(at: element.offset, "expected an INTEGER, found \(element.tagDescription)")
        }
        let contents = bytes[element.contents]
        guard let first = contents.first else {
            throw malformed(at: element.offset, "an INTEGER has no contents")
        }
        guard contents.count <= 8 else {
            throw malformed(at: element.offset, "an INTEGER of \(contents.count) bytes does not fit in 64 bits")
        }
        var value: Int64 = first >= 0x80 ? -1 : 0
        for byte in contents {
            value = (value << 8) | Int64(byte)
        }
        return value
    }

    /// Whether an element is an OBJECT IDENTIFIER with exactly these content bytes.
    func isObjectIdentifier(_ element: BERElement, _ encoded: [UInt8]) -> Bool {
        element.isUniversal(BERElement.Universal.objectIdentifier) && !element.isConstructed
            && bytes[element.contents].elementsEqual(encoded)
    }

    /// Reads the element that starts at `offset` and must end by `limit`.
    private func element(at offset: Int, limit: Int, depth: Int) throws -> BERElement {
        guard depth <= Self.maximumDepth else {
            throw malformed(at: offset, "elements nest more than \(Self.maximumDepth) levels")
        }
        var cursor = offset
        guard cursor < limit else {
            throw malformed(at: offset, "expected an element, found the end of the data")
        }
        let identifier = bytes[cursor]
        cursor += 1
        let tagClass = BERElement.TagClass(rawValue: identifier >> 6) ?? .universal
        let isConstructed = identifier & 0x20 != 0
        var tagNumber = UInt32(identifier & 0x1F)
        if tagNumber == 0x1F {
            tagNumber = 0
            var count = 0
            while true {
                guard cursor < limit else {
                    throw malformed(at: offset, "a tag number runs past the end of the data")
                }
                let byte = bytes[cursor]
                cursor += 1
                count += 1
                guard count <= 4 else {
                    throw malformed(at: offset, "a tag number is longer than 4 bytes")
                }
                tagNumber = (tagNumber << 7) | UInt32(byte & 0x7F)
                if byte & 0x80 == 0 {
                    break
                }
            }
        }
        guard cursor < limit else {
            throw malformed(at: offset, "a \(Self.describe(tagClass, tagNumber)) has no length")
        }
        let lengthByte = bytes[cursor]
        cursor += 1
        if lengthByte == 0x80 {
            guard isConstructed else {
                throw malformed(at: offset, "a primitive element has an indefinite length")
            }
            let contentStart = cursor
            while true {
                guard cursor + 1 < limit else {
                    throw malformed(at: offset, "an indefinite-length element has no end-of-contents octets")
                }
                if bytes[cursor] == 0, bytes[cursor + 1] == 0 {
                    return BERElement(
                        tagClass: tagClass,
                        isConstructed: true,
                        tagNumber: tagNumber,
                        offset: offset,
                        contents: contentStart..<cursor,
                        end: cursor + 2
                    )
                }
                cursor = try element(at: cursor, limit: limit, depth: depth + 1).end
            }
        }
        var length = 0
        if lengthByte & 0x80 == 0 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7F)
            guard count <= 4 else {
                throw malformed(at: offset, "a length has \(count) length octets; at most 4 are accepted")
            }
            guard count <= limit - cursor else {
                throw malformed(at: offset, "a length runs past the end of the data")
            }
            for _ in 0..<count {
                length = (length << 8) | Int(bytes[cursor])
                cursor += 1
            }
        }
        guard length <= limit - cursor else {
            throw malformed(
                at: offset,
                "a \(Self.describe(tagClass, tagNumber)) of \(length) bytes runs past the end of its container "
                    + "(\(limit - cursor) bytes left)"
            )
        }
        if tagClass == .universal, tagNumber == 0 {
            throw malformed(at: offset, "an end-of-contents marker outside an indefinite-length element")
        }
        let element = BERElement(
            tagClass: tagClass,
            isConstructed: isConstructed,
            tagNumber: tagNumber,
            offset: offset,
            contents: cursor..<(cursor + length),
            end: cursor + length
        )
        return element
    }

    private static func describe(_ tagClass: BERElement.TagClass, _ number: UInt32) -> String {
        BERElement(tagClass: tagClass, isConstructed: false, tagNumber: number, offset: 0, contents: 0..<0, end: 0)
            .tagDescription
    }

    /// The error for malformed data at an offset.
    func malformed(at offset: Int, _ message: String) -> IAPError {
        IAPError(.malformedSignedData, "the \(subject) is malformed at byte \(offset): \(message)")
    }
}
