import Dispatch
import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap verify --batch` on every core: one worker per core reads the next line, verifies it and hands its answer to
/// the output, which writes the answers strictly in input order.
///
/// There is no reader or writer thread to hand lines to: a worker takes the next line itself (one worker reads at a
/// time), and whichever worker completes the oldest unanswered line writes it and every answer queued behind it.
/// A line is answered as soon as it and the lines before it are verified, never later than that, and a streaming
/// input (a pipe, a terminal) has every answer flushed whenever all the lines read so far are answered, so a
/// program that writes one line and waits gets its answer. At most ``window`` lines are between read and written
/// (a worker waits before reading more), and a line longer than ``maximumLineLength`` is answered without being
/// held, so memory stays bounded whatever the input.
final class VerifyBatch: @unchecked Sendable {
    /// The longest line verified; a longer one is answered `malformedSignedData` (a signed payload is at most
    /// about 272 KiB). Its bytes are skipped as they arrive.
    static let maximumLineLength = 1 << 20

    /// The most lines between read and written: room for the other workers to go on while one verifies a token
    /// from a chain it has not seen yet (three signatures and two certificates).
    let window: Int

    private let verifiers: [AppStoreSignedDataVerifier]
    private let kind: SignedDataKind?
    private let streaming: Bool

    /// Guards `reader`: one worker reads at a time.
    private let inputLock = NSLock()
    private var reader: LineReader

    /// Guards the counters and `answers`; signalled when an answer is written (a worker may wait for room).
    private let output = NSCondition()
    /// Lines read so far; the next line read gets this number.
    private var linesRead = 0
    /// Lines written so far.
    private var linesWritten = 0
    /// The answers not yet written, by line number modulo `window`.
    private var answers: [[UInt8]?]

    /// Prepares a batch.
    ///
    /// - Parameters:
    ///   - descriptor: The input, one token per line.
    ///   - streaming: Whether someone may be waiting for each answer (the input is a pipe or a terminal).
    ///   - verifiers: One verifier per worker (each keeps its own chain cache, so workers share no lock).
    ///   - kind: The kind every line must be, or `nil` to detect it.
    init(descriptor: Int32, streaming: Bool, verifiers: [AppStoreSignedDataVerifier], kind: SignedDataKind?) {
        self.reader = LineReader(descriptor: descriptor)
        self.streaming = streaming
        self.verifiers = verifiers
        self.kind = kind
        // 16 lines per worker (32 on two cores), at most 256 once there are more than 16 workers.
        self.window = max(2 * verifiers.count, min(16 * verifiers.count, 256), 1)
        self.answers = Array(repeating: nil, count: window)
    }

    /// Verifies every line until the input ends; the answers are in `Output`'s buffer or already written.
    func run() {
        DispatchQueue.concurrentPerform(iterations: verifiers.count) { worker in
            let verifier = verifiers[worker]
            while let (number, line) = nextLine() {
                let answer = Self.answer(line, verifier: verifier, kind: kind)
                deliver(answer, number: number)
            }
        }
    }

    /// Reads the next line and numbers it, once there is room in the window; `nil` at the end of the input.
    private func nextLine() -> (Int, LineReader.Line)? {
        inputLock.lock()
        defer { inputLock.unlock() }
        output.lock()
        while linesRead - linesWritten >= window {
            output.wait()
        }
        output.unlock()
        guard let line = reader.next(maximumLength: Self.maximumLineLength) else {
            return nil
        }
        output.lock()
        let number = linesRead
        linesRead += 1
        output.unlock()
        return (number, line)
    }

    /// Queues a line's answer and writes every answer that is now next in order.
    private func deliver(_ answer: [UInt8], number: Int) {
        output.lock()
        defer { output.unlock() }
        answers[number % window] = answer
        var wrote = false
        while let next = answers[linesWritten % window] {
            answers[linesWritten % window] = nil
            Output.write(next)
            linesWritten += 1
            wrote = true
        }
        guard wrote else { return }
        if streaming, linesWritten == linesRead {
            // Every line read so far is answered: whoever sent them may be waiting for the answers.
            Output.flush()
        }
        output.signal()
    }

    // MARK: - Answers

    /// One line of output, with its newline: `{"ok":true,"kind":...,"payload":...}` or
    /// `{"ok":false,"error":{"code":...,"message":...}}`.
    static func answer(_ line: LineReader.Line, verifier: AppStoreSignedDataVerifier, kind: SignedDataKind?) -> [UInt8]
    {
        switch line {
        case .tooLong(let byteCount):
            return errorLine(
                IAPError(
                    .malformedSignedData,
                    "the line is \(byteCount) bytes, more than the \(maximumLineLength) a line of signed data may hold"
                )
            )
        case .text(let text):
            do {
                let verified = try verifier.verify(Input.token(fromText: text), as: kind)
                var out = AppStoreJSONWriter(capacity: 1_024)
                out.appendRaw(#"{"ok":true,"kind":"#)
                out.appendString(verified.kind.rawValue)
                out.appendRaw(#","payload":"#)
                try out.append(verified)
                out.appendRaw("}\n")
                return out.bytes
            } catch {
                return errorLine(IAPError.wrapping(error, as: .internalError, "unexpected failure"))
            }
        }
    }

    /// A rejected line's answer, with its newline.
    static func errorLine(_ error: IAPError) -> [UInt8] {
        var out = AppStoreJSONWriter(capacity: 256)
        out.appendRaw(#"{"ok":false,"error":{"code":"#)
        out.appendString(error.code.rawValue)
        out.appendRaw(#","message":"#)
        out.appendString(error.message)
        out.appendRaw("}}\n")
        return out.bytes
    }
}
