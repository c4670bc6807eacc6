import Dispatch
import Foundation
import IAPCommandLine
import IAPCore

/// The lines of `iap ledger ingest` in flight at once: up to ``window`` lines are verified and recorded concurrently,
/// so that the ledger writes their records together (the file store flushes every write that arrives while a flush
/// is in flight with the next one), and each line is answered in input order once it is durable.
///
/// A reader thread reads the input (blocking reads, a pipe's lines as they arrive) and takes one of ``window``
/// permits before each line; the ordered output gives a permit back for each line it prints. A line is answered as
/// soon as it and every line before it are done, and the output is flushed whenever it prints, so a program that
/// writes one line and waits for its answer gets it: no answer waits for the next line to be read.
///
/// Lines about the same purchase keep their input order: each line's ``orderKey(of:)`` (the original transaction id,
/// read from the unverified payload, or a notification's id) chains it after the line in flight with the same key,
/// so a purchase and its refund notification are recorded in the order they came. Lines with different keys touch
/// different ledger entries and may complete in any order; their answers are still printed in input order.
///
/// A line whose answer is a ledger failure (``LedgerIngestCommand/Answer/storeFailure``) stops the ingestion: it is
/// printed, no line after it is, and no more lines are read. Lines after it that were already in flight may still
/// have been recorded; they are durable but unacknowledged, and a rerun over the same input acknowledges them
/// (every line is idempotent).
struct LedgerIngestWindow: Sendable {
    /// The most lines between read and answered; 1 processes one line at a time.
    let window: Int

    /// What the ingestion came to.
    struct Summary {
        /// The lines answered.
        var answered = 0
        /// The lines answered `REJECT`.
        var rejected = 0
        /// The ledger failure that stopped the ingestion, if one did.
        var storeFailure: IAPError?
    }

    /// Reads `descriptor` to its end (or to a ledger failure), ingesting each line with `ingest`.
    ///
    /// - Parameters:
    ///   - descriptor: The input, one signed payload per line (not closed).
    ///   - events: Where each line's `ingest.line` event goes, in input order.
    ///   - ingest: Verifies and records one token (the line's number is its second argument); it must return only
    ///     once what it recorded is durable.
    /// - Returns: How many lines were answered and rejected, and the ledger failure that stopped it, if any.
    func run(
        descriptor: Int32,
        events: any EventSink,
        ingest: @escaping @Sendable (String, Int) async -> LedgerIngestCommand.Answer
    ) async -> Summary {
        // Created empty and given its permits by signals: libdispatch traps when a semaphore is released with fewer
        // permits than it was created with, which the reader may leave it with at the end.
        let permits = DispatchSemaphore(value: 0)
        for _ in 0..<window {
            permits.signal()
        }
        let stopped = LockedValue(false)
        let (lines, continuation) = AsyncStream<(number: Int, token: String, key: String?)>.makeStream()
        // The reader also finds each line's token and order key: work done in input order, off the loop that
        // starts the lines.
        let reader = Thread {
            var reader = LineReader(descriptor: descriptor)
            var number = 0
            while true {
                permits.wait()
                guard !stopped.withLock({ $0 }), let line = reader.next() else { break }
                number += 1
                let token = Input.token(fromText: line)
                continuation.yield((number, token, Self.orderKey(of: token)))
            }
            continuation.finish()
        }
        reader.start()
        let output = OrderedOutput(events: events) {
            permits.signal()
        } stop: {
            stopped.withLock { $0 = true }
            // Wake the reader if it waits for a permit, and end the lines whatever it is doing.
            permits.signal()
            continuation.finish()
        }

        await withDiscardingTaskGroup { group in
            // The last line in flight for each key (completed ones are pruned from time to time).
            var latest: [String: Completion] = [:]
            for await line in lines {
                if stopped.withLock({ $0 }) {
                    break
                }
                let done = Completion()
                var previous: Completion?
                if let key = line.key {
                    previous = latest.updateValue(done, forKey: key)
                    if latest.count > 4 * window {
                        latest = latest.filter { !$0.value.isDone }
                    }
                }
                group.addTask {
                    await previous?.wait()
                    let started = SystemClock().now
                    let answer = await ingest(line.token, line.number)
                    let event = answer.event(started: started)
                    done.signal()
                    await output.print(answer, event: event, number: line.number)
                }
            }
        }
        return await output.summary
    }

    // MARK: - Order keys

    /// The key that orders a line after the earlier lines about the same purchase, read cheaply from the unverified
    /// payload (the line is verified later; a forged key can only make lines wait for each other): a transaction's
    /// or renewal info's `originalTransactionId` (else its `transactionId`); a notification's nested transaction's
    /// (else renewal info's) key, else its `notificationUUID`. `nil` when the payload names none of these (an app
    /// transaction) or does not decode (the line is then rejected whatever runs beside it).
    static func orderKey(of token: String) -> String? {
        guard let payload = payloadBytes(of: token) else { return nil }
        if let key = payload.withUnsafeBytes(flatOrderKey) {
            return key
        }
        return orderKey(ofPayload: (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any])
    }

    /// The order key of a decoded payload object (see ``orderKey(of:)``).
    private static func orderKey(ofPayload payload: [String: Any]?) -> String? {
        guard let payload else { return nil }
        if let data = payload["data"] as? [String: Any] {
            for field in ["signedTransactionInfo", "signedRenewalInfo"] {
                if let nested = data[field] as? String, let key = self.payload(of: nested).flatMap(purchaseKey) {
                    return key
                }
            }
        }
        if let key = purchaseKey(payload) {
            return key
        }
        return (payload["notificationUUID"] as? String).map { "notification " + $0 }
    }

    /// The order key of a payload that is one flat JSON object of plain values (a transaction's or a renewal
    /// info's, as Apple signs them), read without building the object: the same key ``orderKey(ofPayload:)`` finds,
    /// or `nil` when the payload is anything else (a nested object, an escape, a number with a fraction, a key of
    /// interest that repeats or is not a string, or none of them) and needs the full parse.
    private static func flatOrderKey(_ bytes: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(bytes)
        var found: [String?] = [nil, nil, nil]
        guard scanner.skipWhitespace(), scanner.consume(UInt8(ascii: "{")), scanner.skipWhitespace(),
            !scanner.consume(UInt8(ascii: "}"))
        else { return nil }
        repeat {
            guard scanner.skipWhitespace(), let key = scanner.string(), scanner.skipWhitespace(),
                scanner.consume(UInt8(ascii: ":")), scanner.skipWhitespace(), let value = scanner.value(),
                scanner.skipWhitespace()
            else { return nil }
            guard let slot = orderKeyFields.firstIndex(where: { $0.elementsEqual(key) }) else { continue }
            guard found[slot] == nil, case .string(let text) = value else { return nil }
            found[slot] = String(decoding: text, as: UTF8.self)
        } while scanner.consume(UInt8(ascii: ","))
        guard scanner.consume(UInt8(ascii: "}")), scanner.skipWhitespace(), scanner.isAtEnd else { return nil }
        if let id = found[0] ?? found[1] {
            return "purchase " + id
        }
        return found[2].map { "notification " + $0 }
    }

    /// The keys ``flatOrderKey(_:)`` reads, in the order they decide.
    private static let orderKeyFields = ["originalTransactionId", "transactionId", "notificationUUID"].map {
        Array($0.utf8)
    }

    /// The original transaction id of a transaction or renewal info payload, else its transaction id.
    private static func purchaseKey(_ payload: [String: Any]) -> String? {
        for field in ["originalTransactionId", "transactionId"] {
            if let id = payload[field] as? String {
                return "purchase " + id
            }
        }
        return nil
    }

    /// The JSON object in a compact JWS's payload segment, unverified.
    private static func payload(of token: String) -> [String: Any]? {
        guard let bytes = payloadBytes(of: token) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// The decoded (unverified) payload of a compact JWS: its second part, base64url-decoded.
    private static func payloadBytes(of token: String) -> [UInt8]? {
        var token = token
        return token.withUTF8 { bytes in
            let dot = UInt8(ascii: ".")
            guard let first = bytes.firstIndex(of: dot), let end = bytes[(first + 1)...].firstIndex(of: dot) else {
                return nil
            }
            return Base64.decodeURL(UnsafeBufferPointer(rebasing: bytes[(first + 1)..<end]))
        }
    }

    // MARK: - Parts

    /// A line's completion, which the next line with the same key waits for.
    final class Completion: Sendable {
        private let state = LockedValue<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        /// Whether the line is done.
        var isDone: Bool {
            state.withLock { $0.done }
        }

        /// Marks the line done and resumes whoever waits for it.
        func signal() {
            let waiters = state.withLock { state in
                state.done = true
                let waiters = state.waiters
                state.waiters = []
                return waiters
            }
            for waiter in waiters {
                waiter.resume()
            }
        }

        /// Returns once the line is done.
        func wait() async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if !state.done {
                        state.waiters.append(continuation)
                    }
                    return state.done
                }
                if done {
                    continuation.resume()
                }
            }
        }
    }

    /// Prints the answers strictly in input order, each with its event, and flushes after every run of them.
    actor OrderedOutput {
        private let events: any EventSink
        private let printed: @Sendable () -> Void
        private let stop: @Sendable () -> Void
        /// The number of the next line to print.
        private var next = 1
        /// The answers of lines after `next`, by line number (at most a window of them).
        private var waiting: [Int: (answer: LedgerIngestCommand.Answer, event: IAPEvent)] = [:]
        private(set) var summary = Summary()

        /// - Parameters:
        ///   - events: Where each printed line's event goes.
        ///   - printed: Called for each line printed (it gives the reader a permit back).
        ///   - stop: Called once, after a ledger failure was printed.
        init(
            events: any EventSink,
            printed: @escaping @Sendable () -> Void,
            stop: @escaping @Sendable () -> Void
        ) {
            self.events = events
            self.printed = printed
            self.stop = stop
        }

        /// Queues a line's answer and prints every answer that is now next in order, up to a ledger failure.
        func print(_ answer: LedgerIngestCommand.Answer, event: IAPEvent, number: Int) {
            guard summary.storeFailure == nil else { return }
            waiting[number] = (answer, event)
            var wrote = false
            while let ready = waiting.removeValue(forKey: next) {
                next += 1
                events.record(ready.event)
                Output.line(ready.answer.line)
                wrote = true
                summary.answered += 1
                if ready.answer.rejected {
                    summary.rejected += 1
                }
                if let failure = ready.answer.storeFailure {
                    summary.storeFailure = failure
                    waiting.removeAll()
                    stop()
                    break
                }
                printed()
            }
            if wrote {
                Output.flush()
            }
        }
    }
}
