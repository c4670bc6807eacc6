import IAPCore

extension StoreLoader {
    /// In a strict mode, throws the first damage found.
    func stopAtDamage() throws {
        if mode != .scan, let damage = findings.first(where: { $0.severity == .damage }) {
            throw IAPError(.storageCorrupted, "\(damage) in \(files.directory)")
        }
    }

    mutating func report(
        _ severity: FileEntitlementStore.Finding.Severity,
        file: String,
        offset: Int? = nil,
        line: Int? = nil,
        _ message: String,
        transactionId: String? = nil
    ) {
        findings.append(
            .init(
                severity: severity,
                file: file,
                line: line,
                offset: offset,
                message: message,
                transactionId: transactionId
            )
        )
    }

    /// Reports damage at a line: strict modes stop here; a scan goes on without the record. Returns `false`.
    @discardableResult
    mutating func damaged(
        _ file: String,
        _ line: RecordFileReader.Line,
        _ reason: String,
        transactionId: String? = nil,
        guessing: Bool = false
    ) throws -> Bool {
        var message = reason
        if case .failure(let problem) = line.result, problem.isUnsupportedVersion {
            message += "; open it with the swift-iap version that wrote it"
        }
        var transaction = transactionId
        if guessing, transaction == nil, let guessed = guessTransactionId(file: file, line: line) {
            transaction = guessed
            message += " (it looks like a record of transaction \(guessed))"
        }
        if mode == .scan {
            message += "; a repair drops it"
        }
        return try damaged(file, offset: line.offset, line: line.number, message, transactionId: transaction)
    }

    @discardableResult
    mutating func damaged(
        _ file: String,
        offset: Int,
        line: Int,
        _ message: String,
        transactionId: String? = nil
    ) throws -> Bool {
        report(.damage, file: file, offset: offset, line: line, message, transactionId: transactionId)
        if mode != .scan {
            throw IAPError(
                .storageCorrupted,
                "\(file): \(message) at byte offset \(offset) (line \(line)) in \(files.directory)"
            )
        }
        return false
    }

    /// The first `"transactionId":"…"` of a damaged line, for the message.
    private func guessTransactionId(file: String, line: RecordFileReader.Line) -> String? {
        let path = files.path(file)
        guard let bytes = try? SignedTransactionReader.line(of: path, at: line.offset, length: line.length) else {
            return nil
        }
        let key = Array("\"transactionId\":\"".utf8)
        guard let start = bytes.firstRange(of: key)?.upperBound,
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")), end - start <= 64
        else { return nil }
        let id = String(decoding: bytes[start..<end], as: UTF8.self)
        return id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } ? id : nil
    }
}
