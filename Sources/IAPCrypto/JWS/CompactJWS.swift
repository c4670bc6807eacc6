#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// A compact JWS split into its three segments, checked for shape but not yet for its signature.
///
/// The parser is strict on purpose: exactly three non-empty segments of unpadded base64url, each under
/// a size limit, a header that is a JSON object, and a 64-byte signature. Anything else is
/// ``IAPError/Code/malformedSignedData`` before any cryptography runs.
struct CompactJWS {
    /// Size limits on the encoded segments. Apple's largest real tokens (notifications carrying a
    /// signed transaction and a signed renewal info) are about 15 KiB.
    enum Limits {
        static let header = 16 * 1024
        static let payload = 256 * 1024
        static let total = header + payload + 128
        /// A raw ES256 signature is 64 bytes, 86 characters of unpadded base64url.
        static let signatureLength = 86
        static let certificate = 8 * 1024
    }

    /// The encoded header segment, as it appears in the token.
    let headerSegment: Substring
    /// The bytes that were signed: `header.payload`, as ASCII.
    let signingInput: Substring
    /// The decoded payload bytes (JSON).
    let payload: [UInt8]
    /// The decoded 64-byte signature.
    let signature: [UInt8]

    init(_ token: String) throws {
        let utf8 = token.utf8
        guard !utf8.isEmpty else {
            throw IAPError(.malformedSignedData, "the signed data is empty")
        }
        guard utf8.count <= Limits.total else {
            throw IAPError(.malformedSignedData, "the signed data is \(utf8.count) bytes, more than \(Limits.total)")
        }
        guard let firstDot = utf8.firstIndex(of: UInt8(ascii: ".")) else {
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found 1")
        }
        let afterFirst = utf8.index(after: firstDot)
        guard let secondDot = utf8[afterFirst...].firstIndex(of: UInt8(ascii: ".")) else {
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found 2")
        }
        let afterSecond = utf8.index(after: secondDot)
        if utf8[afterSecond...].contains(UInt8(ascii: ".")) {
            let count = utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count + 1
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found \(count)")
        }
        let header = token[token.startIndex..<firstDot]
        let payload = token[afterFirst..<secondDot]
        let signature = token[afterSecond...]
        guard !header.isEmpty, !payload.isEmpty, !signature.isEmpty else {
            throw IAPError(.malformedSignedData, "a segment of the compact JWS is empty")
        }
        guard header.utf8.count <= Limits.header else {
            throw IAPError(
                .malformedSignedData,
                "the JWS header is \(header.utf8.count) bytes, more than \(Limits.header)"
            )
        }
        guard payload.utf8.count <= Limits.payload else {
            throw IAPError(
                .malformedSignedData,
                "the JWS payload is \(payload.utf8.count) bytes, more than \(Limits.payload)"
            )
        }
        guard signature.utf8.count == Limits.signatureLength else {
            throw IAPError(
                .malformedSignedData,
                "the JWS signature must be 64 bytes as unpadded base64url (86 characters), found \(signature.utf8.count) characters"
            )
        }
        guard let decodedSignature = Self.decode(signature) else {
            throw IAPError(.malformedSignedData, "the JWS signature is not canonical unpadded base64url")
        }
        guard let decodedPayload = Self.decode(payload) else {
            throw IAPError(.malformedSignedData, "the JWS payload is not canonical unpadded base64url")
        }
        // The header is decoded lazily (see `decodeHeader()`), so a cached header costs nothing.
        guard Self.isBase64URL(header) else {
            throw IAPError(.malformedSignedData, "the JWS header is not unpadded base64url")
        }
        self.headerSegment = header
        self.signingInput = token[token.startIndex..<secondDot]
        self.payload = decodedPayload
        self.signature = decodedSignature
    }

    /// Decodes and checks the protected header.
    func decodeHeader() throws -> Header {
        guard let bytes = Self.decode(headerSegment) else {
            throw IAPError(.malformedSignedData, "the JWS header is not canonical unpadded base64url")
        }
        return try Header(json: bytes)
    }

    private static func decode(_ segment: Substring) -> [UInt8]? {
        var segment = segment
        return segment.withUTF8 { Base64.decodeURL($0) }
    }

    private static func isBase64URL(_ segment: Substring) -> Bool {
        let remainder = segment.utf8.count % 4
        guard remainder != 1 else { return false }
        return segment.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }
}

extension CompactJWS {
    /// The JWS protected header fields that matter to App Store data.
    struct Header {
        /// The `alg` value.
        let algorithm: String
        /// The `kid` value, if any (Xcode uses `Apple_Xcode_Key`).
        let keyID: String?
        /// The DER certificates of `x5c`, leaf first.
        let certificateChain: [[UInt8]]

        private struct Wire: Decodable {
            let alg: String?
            let kid: String?
            let x5c: [String]?
            let crit: [String]?
        }

        init(json: [UInt8]) throws {
            guard json.first(where: { !Self.isJSONWhitespace($0) }) == UInt8(ascii: "{") else {
                throw IAPError(.malformedSignedData, "the JWS header is not a JSON object")
            }
            let wire: Wire
            do {
                wire = try JSONDecoder().decode(Wire.self, from: Data(json))
            } catch {
                throw IAPError(
                    .malformedSignedData,
                    "the JWS header is not valid JSON of the expected shape",
                    underlying: SendableErrorBox(error)
                )
            }
            guard let alg = wire.alg else {
                throw IAPError(.malformedSignedData, "the JWS header has no 'alg'")
            }
            guard alg == "ES256" else {
                throw IAPError(.unsupportedAlgorithm, "the JWS algorithm is '\(alg)'; only ES256 is accepted")
            }
            if let crit = wire.crit {
                throw IAPError(
                    .malformedSignedData,
                    "the JWS header marks extensions critical (\(crit.joined(separator: ", "))), which are not understood"
                )
            }
            guard let x5c = wire.x5c else {
                throw IAPError(.malformedSignedData, "the JWS header has no 'x5c' certificate chain")
            }
            var chain: [[UInt8]] = []
            chain.reserveCapacity(x5c.count)
            for (index, entry) in x5c.enumerated() {
                guard entry.utf8.count <= Limits.certificate else {
                    throw IAPError(
                        .malformedSignedData,
                        "x5c[\(index)] is \(entry.utf8.count) bytes, more than \(Limits.certificate)"
                    )
                }
                guard let der = Base64.decodeStandard(entry), !der.isEmpty else {
                    throw IAPError(.malformedSignedData, "x5c[\(index)] is not standard base64")
                }
                chain.append(der)
            }
            self.algorithm = alg
            self.keyID = wire.kid
            self.certificateChain = chain
        }

        private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
    }
}
