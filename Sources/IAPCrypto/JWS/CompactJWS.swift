#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A compact JWS split into its three segments, checked for shape but not yet for its signature.
///
/// The parser is strict on purpose: exactly three non-empty segments of unpadded base64url, each under
/// a size limit, a header that is a JSON object, and a 64-byte signature. Anything else is
/// ``IAPError/Code/malformedSignedData`` before any cryptography runs.
///
/// It works on the token's UTF-8 bytes in place: the header stays encoded until it is needed (a
/// header the verifier has seen before is never decoded again), and the signing input is a range of
/// the token.
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

    /// The encoded header segment.
    let header: UnsafeBufferPointer<UInt8>
    /// The bytes that were signed: `header.payload`, as ASCII.
    let signingInput: UnsafeBufferPointer<UInt8>
    /// The decoded payload bytes (JSON).
    let payload: [UInt8]
    /// The decoded 64-byte signature.
    let signature: [UInt8]

    /// Parses a token's UTF-8 bytes; the result borrows `token` and must not outlive it.
    init(_ token: UnsafeBufferPointer<UInt8>) throws {
        guard let base = token.baseAddress, !token.isEmpty else {
            throw IAPError(.malformedSignedData, "the signed data is empty")
        }
        guard token.count <= Limits.total else {
            throw IAPError(.malformedSignedData, "the signed data is \(token.count) bytes, more than \(Limits.total)")
        }
        let dot = UInt8(ascii: ".")
        guard let firstDot = Self.index(of: dot, in: token, from: 0) else {
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found 1")
        }
        guard let secondDot = Self.index(of: dot, in: token, from: firstDot + 1) else {
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found 2")
        }
        if Self.index(of: dot, in: token, from: secondDot + 1) != nil {
            let count = token.lazy.filter { $0 == dot }.count + 1
            throw IAPError(.malformedSignedData, "a compact JWS has three segments separated by '.', found \(count)")
        }
        let header = UnsafeBufferPointer(start: base, count: firstDot)
        let payload = UnsafeBufferPointer(start: base + firstDot + 1, count: secondDot - firstDot - 1)
        let signature = UnsafeBufferPointer(start: base + secondDot + 1, count: token.count - secondDot - 1)
        guard !header.isEmpty, !payload.isEmpty, !signature.isEmpty else {
            throw IAPError(.malformedSignedData, "a segment of the compact JWS is empty")
        }
        guard header.count <= Limits.header else {
            throw IAPError(.malformedSignedData, "the JWS header is \(header.count) bytes, more than \(Limits.header)")
        }
        guard payload.count <= Limits.payload else {
            throw IAPError(
                .malformedSignedData,
                "the JWS payload is \(payload.count) bytes, more than \(Limits.payload)"
            )
        }
        guard signature.count == Limits.signatureLength else {
            throw IAPError(
                .malformedSignedData,
                "the JWS signature must be 64 bytes as unpadded base64url (86 characters), "
                    + "found \(signature.count) characters"
            )
        }
        guard let decodedSignature = Base64.decodeURL(signature) else {
            throw IAPError(.malformedSignedData, "the JWS signature is not canonical unpadded base64url")
        }
        guard let decodedPayload = Base64.decodeURL(payload) else {
            throw IAPError(.malformedSignedData, "the JWS payload is not canonical unpadded base64url")
        }
        // The header is decoded and checked lazily (see `decodeHeader()`): a header identical to one
        // that was checked before needs no second look.
        self.header = header
        self.signingInput = UnsafeBufferPointer(start: base, count: secondDot)
        self.payload = decodedPayload
        self.signature = decodedSignature
    }

    /// The first index of `byte` at or after `start`, found with `memchr`.
    private static func index(of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = buffer.baseAddress, start < buffer.count else { return nil }
        guard let found = memchr(base + start, Int32(byte), buffer.count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// Whether JSON text starts (after white space) with `{`: the cheap first check that a segment is an
    /// object, before any decoder sees it.
    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        bytes.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) } == UInt8(ascii: "{")
    }

    /// Refuses JSON that holds one key twice in an object, at any depth (``JSONDuplicateKeys``): readers
    /// disagree on which value such a document means, so it means nothing.
    ///
    /// - Parameters:
    ///   - json: The decoded segment.
    ///   - segment: Its name for the message (`header`, `payload`).
    /// - Returns: `true` when the text is strict JSON with distinct keys; `false` when it is not strict JSON, for
    ///   the decoder to report, and for the caller to refuse should the decoder accept it anyway.
    /// - Throws: ``IAPError`` with code `malformedSignedData` naming the repeated key.
    static func checkDistinctKeys(_ json: [UInt8], segment: String) throws -> Bool {
        switch json.withUnsafeBytes({ JSONDuplicateKeys.find(in: $0) }) {
        case .unique:
            return true
        case .malformed:
            return false
        case .duplicate(let key, let path):
            let shown = key.count > 64 ? key.prefix(64) + "…" : key
            throw IAPError(
                .malformedSignedData,
                "the JWS \(segment) holds the key '\(shown)' twice in the object at "
                    + (path.isEmpty ? "its top level" : "'\(path)'") + "; a signed document must have one meaning"
            )
        }
    }

    /// The error for a segment that `JSONDecoder` read although it is not strict JSON.
    static func notStrictJSON(_ segment: String) -> IAPError {
        IAPError(.malformedSignedData, "the JWS \(segment) is not strict JSON (RFC 8259)")
    }

    /// Decodes and checks the protected header.
    func decodeHeader() throws -> Header {
        guard let bytes = Base64.decodeURL(header) else {
            throw IAPError(.malformedSignedData, "the JWS header is not canonical unpadded base64url")
        }
        return try Header(json: bytes)
    }
}

extension CompactJWS {
    /// The JWS protected header fields that matter to App Store data.
    struct Header {
        /// The `alg` value.
        let algorithm: String
        /// The `kid` value, if any (Xcode uses `Apple_Xcode_Key`).
        let keyId: String?
        /// The DER certificates of `x5c`, leaf first.
        let certificateChain: [[UInt8]]

        private struct Wire: Decodable {
            let alg: String?
            let kid: String?
            let x5c: [String]?
            let crit: [String]?
        }

        init(json: [UInt8]) throws {
            guard CompactJWS.isJSONObject(json) else {
                throw IAPError(.malformedSignedData, "the JWS header is not a JSON object")
            }
            let strict = try CompactJWS.checkDistinctKeys(json, segment: "header")
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
            guard strict else {
                throw CompactJWS.notStrictJSON("header")
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
            self.keyId = wire.kid
            self.certificateChain = chain
        }
    }
}
