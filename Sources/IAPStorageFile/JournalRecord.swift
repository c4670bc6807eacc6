#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// The line format of journal, snapshot and signed-transaction files.
///
/// Every record is one line of JSON, `{"v":2,"seq":N,"crc":"xxxxxxxx","op":{…}}` and a newline, where `v` is
/// the format version, `seq` the record's number (the log sequence number in a journal, 0 for a journal's header
/// line, the position in a snapshot or signed-transaction file), `crc` the CRC-32C of the exact bytes of the `op`
/// value in eight lowercase hex digits, and `op` a ``JournalOperation``. The envelope's keys are always written
/// in this order, so a reader finds the checksummed bytes without parsing the operation first.
///
/// Version 2 added the signed transactions (the `signedTransaction` and `signed` keys of entry records, the
/// `journal`, `header` and `signed` records); version 3 the `header` records of a journal and the signed
/// transactions that refer to them (``JournalOperation/SignedField/split(header:rest:)``); version 4 the support
/// audit's head (`auditHead` records). A line carries the lowest version that reads it
/// (``JournalOperation/formatVersion``): 4 for an `auditHead` record, 3 for the others of version 3, 2 for the rest.
/// This build reads 1 to 4, so a ledger written by an earlier version opens unchanged, and an earlier version refuses
/// a journal this one wrote with a clear message rather than misreading it.
enum JournalRecord {
    /// The highest format version this build writes.
    static let formatVersion = 4
    /// The format versions this build reads.
    static let readableVersions: ClosedRange<UInt64> = 1...4

    /// A decoded line.
    struct Decoded: Sendable {
        /// The record's number.
        var seq: UInt64
        /// What it records.
        var operation: JournalOperation
    }

    /// Why a line could not be read.
    struct Problem: Error, Sendable {
        /// What is wrong, for the error message.
        var reason: String
        /// Whether the line is intact but written by another format version.
        var isUnsupportedVersion: Bool = false
    }

    /// Encodes one record as a line, newline included.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` if the operation cannot be encoded.
    static func line(_ operation: JournalOperation, seq: UInt64, encoder: RecordEncoder) throws -> [UInt8] {
        let body: [UInt8]
        do {
            body = try encoder.encode(operation)
        } catch {
            throw IAPError(.storageFailure, "cannot encode a \(operation.kind) record", underlying: error)
        }
        let crc = CRC32C.hex(CRC32C.checksum(body))
        var line: [UInt8] = []
        line.reserveCapacity(body.count + 64)
        line += Array("{\"v\":\(operation.formatVersion),\"seq\":\(seq),\"crc\":\"".utf8)
        line += crc
        line += Array("\",\"op\":".utf8)
        line += body
        line += [UInt8(ascii: "}"), UInt8(ascii: "\n")]
        return line
    }

    /// Decodes one line (without its newline).
    static func decode(_ line: UnsafeRawBufferPointer, decoder: RecordDecoder) -> Result<Decoded, Problem> {
        var scanner = Scanner(bytes: line)
        guard scanner.expect("{\"v\":"), let version = scanner.number() else {
            return .failure(Problem(reason: "not a record (expected {\"v\":<version>,…})"))
        }
        guard readableVersions.contains(version) else {
            return .failure(
                Problem(
                    reason: "unsupported format version \(version) (this build reads versions "
                        + "\(readableVersions.lowerBound) to \(readableVersions.upperBound))",
                    isUnsupportedVersion: true
                )
            )
        }
        guard scanner.expect(",\"seq\":"), let seq = scanner.number() else {
            return .failure(Problem(reason: "malformed record: no \"seq\""))
        }
        guard scanner.expect(",\"crc\":\""), let crc = scanner.hex8(), scanner.expect("\",\"op\":") else {
            return .failure(Problem(reason: "malformed record: no \"crc\""))
        }
        guard line.count > scanner.index, line[line.count - 1] == UInt8(ascii: "}") else {
            return .failure(Problem(reason: "malformed record: it does not end with }"))
        }
        let body = UnsafeRawBufferPointer(rebasing: line[scanner.index..<(line.count - 1)])
        let actual = CRC32C.checksum(body)
        guard actual == crc else {
            return .failure(
                Problem(
                    reason: "bad checksum (stored \(String(crc, radix: 16)), computed \(String(actual, radix: 16)))"
                )
            )
        }
        do {
            let operation = try decoder.decode(body)
            return .success(Decoded(seq: seq, operation: operation))
        } catch {
            return .failure(Problem(reason: "undecodable operation: \(String(describing: error))"))
        }
    }

    /// Decodes one line held in an array (without its newline).
    static func decode(_ line: [UInt8], decoder: RecordDecoder = RecordDecoder()) -> Result<Decoded, Problem> {
        line.withUnsafeBytes { decode($0, decoder: decoder) }
    }

    /// A cursor over the fixed envelope of a line.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func expect(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else {
                return false
            }
            let matches = text.withUTF8Buffer { expected in
                (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            if matches {
                index += count
            }
            return matches
        }

        /// A decimal number without sign or leading zeros that fits in UInt64.
        mutating func number() -> UInt64? {
            let start = index
            var value: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = shifted.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow, !carry else {
                    return nil
                }
                value = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else {
                return nil
            }
            return value
        }

        /// Eight lowercase hexadecimal digits.
        mutating func hex8() -> UInt32? {
            guard index + 8 <= bytes.count else {
                return nil
            }
            var value: UInt32 = 0
            for _ in 0..<8 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"):
                    digit = byte - UInt8(ascii: "a") + 10
                default:
                    return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
