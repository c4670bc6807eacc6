internal import CIAPOpenSSL

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One `-----BEGIN <label>-----` block of a PEM document, decoded.
struct PEMBlock {
    /// The label between `BEGIN` and the dashes, such as `"PRIVATE KEY"`.
    let label: String
    /// Whether the block has RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`), which swift-iap never accepts.
    let hasHeaders: Bool
    /// The base64-decoded body.
    let der: [UInt8]

    /// The result of reading a PEM document.
    struct Document {
        /// The blocks that were read, in order.
        var blocks: [PEMBlock]
        /// Why reading stopped, when it stopped on a malformed block rather than at the end of the text.
        var failure: OpenSSLError?

        /// Describes an empty document for an error message, with OpenSSL's reason when there is one.
        var emptyReason: String {
            failure.map { "No PEM block could be read: \($0)" } ?? "No PEM block found"
        }
    }

    /// Decodes every PEM block of a document, in order, with `PEM_read_bio`.
    ///
    /// Text outside the blocks is ignored, as OpenSSL does. Reading stops at the first malformed block.
    ///
    /// - Parameter pem: The PEM document.
    /// - Returns: The blocks read before the end of the text or the first malformed block.
    static func read(_ pem: String) -> Document {
        ERR_clear_error()
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else {
            return Document(blocks: [], failure: nil)
        }
        return bytes.withUnsafeBytes { buffer -> Document in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                return Document(blocks: [], failure: OpenSSLError.drain(after: "BIO_new_mem_buf"))
            }
            defer { BIO_free(bio) }
            var blocks: [PEMBlock] = []
            while true {
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else {
                    break
                }
                defer {
                    ciap_OPENSSL_free(name)
                    ciap_OPENSSL_free(header)
                    ciap_OPENSSL_free(data)
                }
                let label = name.map { String(cString: $0) } ?? ""
                let hasHeaders = header.map { $0.pointee != 0 } ?? false
                let der = data.map { Array(UnsafeBufferPointer(start: $0, count: max(0, length))) } ?? []
                blocks.append(PEMBlock(label: label, hasHeaders: hasHeaders, der: der))
            }
            // Reading past the last block fails with "no start line": that is the end of the document.
            if ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE {
                ERR_clear_error()
                return Document(blocks: blocks, failure: nil)
            }
            return Document(blocks: blocks, failure: OpenSSLError.drain(after: "PEM_read_bio"))
        }
    }

    /// Encodes DER as a PEM block with 64-character lines.
    ///
    /// - Parameters:
    ///   - label: The label, such as `"PRIVATE KEY"`.
    ///   - der: The bytes to encode.
    /// - Returns: The PEM text, ending with a newline.
    static func encode(label: String, der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var text = "-----BEGIN \(label)-----\n"
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            text += base64[index..<end]
            text += "\n"
            index = end
        }
        text += "-----END \(label)-----\n"
        return text
    }
}
