#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// Reads signed transactions back from where the file store keeps them: a journal's `insert` or `replace` record
/// (and the journal's `header` record it may refer to), or a `signed` record of the signed-transaction file and the
/// `header` record it refers to.
///
/// Every line read back is checked again (its checksum, its kind, its transaction id), so a damaged file is
/// `storageCorrupted` naming it, never a wrong answer. One instance per thread or actor: it caches headers.
final class SignedTransactionReader {
    let files: StoreFiles
    /// The signed-transaction file in use, if any.
    let signedGeneration: UInt64?
    /// Headers already read, by file and offset.
    private var headers: [HeaderPlace: String] = [:]
    private let decoder = RecordDecoder()

    init(files: StoreFiles, signedGeneration: UInt64?) {
        self.files = files
        self.signedGeneration = signedGeneration
    }

    /// The signed transaction at `location`, which must be the one of `transactionId`.
    ///
    /// - Parameters:
    ///   - location: Where it is; `pending` is not readable (its record is not written yet).
    ///   - transactionId: The entry's transaction id.
    /// - Returns: The compact JWS, or `nil` for ``SignedLocation/none``.
    /// - Throws: ``IAPError`` with code `storageCorrupted` when the line does not read back as that transaction's
    ///   signed data, `storageFailure` when it cannot be read.
    func read(_ location: SignedLocation, transactionId: String) throws -> String? {
        switch location.kind {
        case .none:
            return nil
        case .pending:
            throw IAPError(.internalError, "the signed transaction of \(transactionId) is not written yet")
        case .journal(let generation, let offset, let length):
            let name = StoreFiles.journalName(generation)
            let line = try Self.line(of: files.journal(generation), at: offset, length: length)
            switch JournalRecord.decode(line, decoder: decoder) {
            case .success(let record):
                switch record.operation {
                case .insert(let entry, .jws(let jws)) where entry.transactionId == transactionId,
                    .replace(let entry, .jws(let jws)) where entry.transactionId == transactionId:
                    return jws
                case .insert(let entry, .split(let header, let rest)) where entry.transactionId == transactionId,
                    .replace(let entry, .split(let header, let rest)) where entry.transactionId == transactionId:
                    return try journalHeader(at: header, generation: generation, before: offset) + "." + rest
                default:
                    throw mismatch(name, offset, transactionId, "the record there is not its signed transaction")
                }
            case .failure(let problem):
                throw mismatch(name, offset, transactionId, problem.reason)
            }
        case .signedFile(let reference):
            guard let generation = signedGeneration else {
                throw IAPError(
                    .storageCorrupted,
                    "the signed transaction of \(transactionId) refers to a signed-transaction file, and the manifest "
                        + "names none, in \(files.directory)"
                )
            }
            let name = StoreFiles.signedName(generation)
            let path = files.signed(generation)
            let line = try Self.line(of: path, at: Int(reference.offset), length: Int(reference.length))
            guard case .success(let record) = JournalRecord.decode(line, decoder: decoder),
                case .signed(let signed) = record.operation, signed.transactionId == transactionId
            else {
                throw mismatch(name, Int(reference.offset), transactionId, "the line there is not its signed record")
            }
            return try header(at: signed.header, in: path, name: name) + "." + signed.rest
        }
    }

    /// Where a `header` record is: its file and byte offset.
    private struct HeaderPlace: Hashable {
        var path: String
        var offset: UInt64
    }

    /// The protected header of the `header` record at `offset` of journal `generation`, which must come before the
    /// record that refers to it.
    private func journalHeader(at offset: UInt64, generation: UInt64, before referrer: Int) throws -> String {
        let name = StoreFiles.journalName(generation)
        guard offset < UInt64(referrer) else {
            throw IAPError(
                .storageCorrupted,
                "\(name): the record at byte offset \(referrer) refers to a header at \(offset), which is not before "
                    + "it, in \(files.directory)"
            )
        }
        return try header(at: offset, in: files.journal(generation), name: name)
    }

    /// The protected header of a `header` record, of the signed-transaction file or of a journal.
    private func header(at offset: UInt64, in path: String, name: String) throws -> String {
        let place = HeaderPlace(path: path, offset: offset)
        if let cached = headers[place] {
            return cached
        }
        let line = try Self.line(of: path, at: Int(offset), length: nil)
        guard case .success(let record) = JournalRecord.decode(line, decoder: decoder),
            case .header(let header) = record.operation
        else {
            throw IAPError(
                .storageCorrupted,
                "\(name): the header record at byte offset \(offset) does not read back, in \(files.directory)"
            )
        }
        if headers.count >= 64 {
            headers.removeAll()
        }
        headers[place] = header
        return header
    }

    private func mismatch(_ file: String, _ offset: Int, _ transactionId: String, _ reason: String) -> IAPError {
        IAPError(
            .storageCorrupted,
            "\(file): the signed transaction of \(transactionId) at byte offset \(offset) does not read back "
                + "(\(reason)) in \(files.directory)"
        )
    }

    /// The line of `path` that starts at `offset`: `length` bytes, or up to the next newline.
    static func line(of path: String, at offset: Int, length: Int?) throws -> [UInt8] {
        let file = try SystemFile.open(path, flags: O_RDONLY)
        defer { file.close() }
        if let length {
            var bytes = [UInt8](repeating: 0, count: length)
            let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            guard count == length else {
                throw IAPError(.storageCorrupted, "\(path) ends before byte \(offset + length)")
            }
            return bytes
        }
        var size = 8 << 10
        while size <= 1 << 20 {
            var bytes = [UInt8](repeating: 0, count: size)
            let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            if let end = bytes.prefix(count).firstIndex(of: UInt8(ascii: "\n")) {
                return Array(bytes[..<end])
            }
            guard count == size else {
                break
            }
            size *= 4
        }
        throw IAPError(.storageCorrupted, "\(path) holds no complete line at byte offset \(offset)")
    }
}

/// Appends signed transactions to a signed-transaction file: what a compaction does with the ones the journals
/// hold, so that the journals can go.
///
/// The protected header of a JWS (its certificate chain, 4 KB of Apple's 6 KB tokens) is the same for nearly
/// every transaction, so it is written once as a `header` record and each `signed` record refers to it by offset.
/// The file is cut back to its committed length first (what an interrupted compaction appended is dropped), and
/// nothing appended counts until the manifest records the new length.
struct SignedFileAppender {
    let path: String
    private let file: SystemFile
    private let encoder = RecordEncoder()
    private var buffer: [UInt8] = []
    /// The file's length, buffered bytes included.
    private(set) var bytes: Int
    /// The records it holds.
    private(set) var records: UInt64
    /// Header → offset of its `header` record, for the headers already in the file.
    private(set) var headers: [String: UInt64]

    /// Opens (or creates) the file and cuts it to its committed length.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - committed: Its committed length and record count.
    ///   - headers: Headers known to be in its committed part, by offset.
    init(path: String, committed: (bytes: Int, records: UInt64), headers: [String: UInt64]) throws {
        self.path = path
        file = try SystemFile.open(path, flags: O_WRONLY | O_CREAT)
        let size = try file.size()
        guard size >= committed.bytes else {
            throw IAPError(
                .storageCorrupted,
                "\(path) is \(size) bytes, shorter than the \(committed.bytes) the manifest records"
            )
        }
        if size > committed.bytes {
            try file.truncate(to: committed.bytes)
        }
        _ = lseek(file.descriptor, off_t(committed.bytes), SEEK_SET)
        bytes = committed.bytes
        records = committed.records
        self.headers = headers.filter { $0.value < UInt64(committed.bytes) }
    }

    /// Appends one signed transaction and returns where it is.
    mutating func append(_ jws: String, transactionId: String) throws -> JournalOperation.SignedReference {
        guard let dot = jws.utf8.firstIndex(of: UInt8(ascii: ".")) else {
            throw IAPError(.storageCorrupted, "the signed transaction of \(transactionId) is not a compact JWS")
        }
        let header = String(jws[..<dot])
        let rest = String(jws[jws.utf8.index(after: dot)...])
        let headerOffset: UInt64
        if let known = headers[header] {
            headerOffset = known
        } else {
            headerOffset = UInt64(bytes)
            try write(.header(header))
            headers[header] = headerOffset
        }
        let offset = UInt64(bytes)
        let length = try write(.signed(.init(transactionId: transactionId, header: headerOffset, rest: rest)))
        return .init(offset: offset, length: UInt32(clamping: length))
    }

    /// Writes what is buffered and, with `sync`, flushes the file to the device.
    mutating func finish(sync: Bool) throws {
        try file.write(buffer)
        buffer.removeAll()
        if sync {
            try file.sync()
        }
        file.close()
    }

    /// Appends one record; returns its line's length without the newline.
    @discardableResult
    private mutating func write(_ operation: JournalOperation) throws -> Int {
        let line = try JournalRecord.line(operation, seq: records + 1, encoder: encoder)
        records += 1
        bytes += line.count
        buffer += line
        if buffer.count >= 1 << 20 {
            try file.write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        return line.count - 1
    }
}
