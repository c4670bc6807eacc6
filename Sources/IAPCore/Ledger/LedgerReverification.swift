import Foundation

/// Every signed transaction a ledger keeps, verified again and compared with the payload recorded beside it: what
/// `iap ledger check --reverify` reports.
///
/// An entry counts as ``verified`` when its signed transaction verifies now (with the verifier given: its roots, app
/// identity and environments) and decodes to exactly the recorded payload. An entry without one is ``missing`` when
/// it predates the store keeping them (``ListableEntitlementStore/firstSignedSequence()``), else a problem; so is a
/// signed transaction that cannot be read back, does not verify, or says something else than its entry.
///
/// ```swift
/// let result = try await LedgerReverification.run(store, verifier: verifier)
/// for problem in result.problems {
///     print(problem.line)
/// }
/// ```
public struct LedgerReverification: Sendable {
    /// An entry whose signed transaction does not verify, cannot be read, or says something else than the entry.
    public struct Problem: Sendable, Hashable {
        /// The entry's transaction id.
        public let transactionId: String
        /// What failed: `storageCorrupted` for a payload that differs, `notFound` for a signed transaction that
        /// should be kept and is not, the verifier's code for one that does not verify, the store's for one that
        /// cannot be read.
        public let code: IAPError.Code
        /// What is wrong, for the operator.
        public let message: String

        /// Creates a problem.
        ///
        /// - Parameters:
        ///   - transactionId: The entry's transaction id.
        ///   - code: What failed.
        ///   - message: What is wrong.
        public init(transactionId: String, code: IAPError.Code, message: String) {
            self.transactionId = transactionId
            self.code = code
            self.message = message
        }

        /// The problem as one line: `code: transaction ID: message`.
        public var line: String { "\(code.rawValue): transaction \(transactionId): \(message)" }
    }

    /// How many entries' signed transactions verified and match the recorded payload.
    public var verified = 0
    /// The transaction ids of the entries without a signed transaction that predate the ledger keeping them.
    public var missing: [String] = []
    /// Every entry that did not verify, in the ledger's order.
    public var problems: [Problem] = []

    /// An empty result.
    public init() {}

    /// Re-verifies every entry of a ledger.
    ///
    /// - Parameters:
    ///   - store: The ledger; it is only read.
    ///   - verifier: The verifier to check each signed transaction with (the chain at each one's `signedDate`, as
    ///     `AppStoreSignedDataVerifier` checks a stored transaction).
    ///   - progress: Told `(done, total)` after every 50,000 entries, for a long run.
    /// - Returns: What was found.
    /// - Throws: ``IAPError`` when the ledger cannot be listed; an entry that fails is a ``Problem``, not an error.
    public static func run(
        _ store: some ListableEntitlementStore,
        verifier: some Verifier,
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws -> LedgerReverification {
        var result = LedgerReverification()
        let total = try await store.statistics().transactions
        let signedFrom = try await store.firstSignedSequence()
        var done = 0
        // A page at a time: the memory of one page (and of what is found), whatever the ledger's size.
        try await store.forEachPage { page in
            for entry in page {
                if done > 0, done % 50_000 == 0 {
                    progress(done, max(total, done))
                }
                done += 1
                switch await check(entry, store: store, verifier: verifier, signedFrom: signedFrom) {
                case .verified: result.verified += 1
                case .missing: result.missing.append(entry.transactionId)
                case .problem(let problem): result.problems.append(problem)
                }
            }
        }
        return result
    }

    /// What re-verifying one entry found.
    private enum Outcome {
        case verified
        /// It predates the ledger keeping signed transactions.
        case missing
        case problem(Problem)
    }

    /// Re-verifies one entry.
    private static func check(
        _ entry: LedgerEntry,
        store: some ListableEntitlementStore,
        verifier: some Verifier,
        signedFrom: Int64
    ) async -> Outcome {
        let signed: String?
        do {
            signed = try await store.signedTransaction(transactionId: entry.transactionId)
        } catch {
            let failure = IAPError.wrapping(error, as: .storageFailure, "cannot read its signed transaction")
            return .problem(
                Problem(
                    transactionId: entry.transactionId,
                    code: failure.code,
                    message: "its signed transaction cannot be read back: \(failure.message)"
                )
            )
        }
        guard let signed else {
            if entry.sequence < signedFrom {
                return .missing
            }
            return .problem(
                Problem(
                    transactionId: entry.transactionId,
                    code: .notFound,
                    message: "it was recorded without its signed transaction, though the ledger keeps them since "
                        + "sequence \(signedFrom): it cannot be verified again"
                )
            )
        }
        let payload: TransactionPayload
        do {
            payload = try await verifier.verifyTransaction(signed)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "verification failed")
            return .problem(
                Problem(
                    transactionId: entry.transactionId,
                    code: failure.code,
                    message: "its signed transaction does not verify: \(failure.message)"
                )
            )
        }
        let differences = Self.differences(recorded: entry.transaction, signed: payload)
        guard differences.isEmpty else {
            return .problem(
                Problem(
                    transactionId: entry.transactionId,
                    code: .storageCorrupted,
                    message: "the recorded payload differs from its signed transaction in "
                        + differences.joined(separator: ", ")
                )
            )
        }
        return .verified
    }

    /// The fields (Apple's names) in which two payloads differ.
    ///
    /// - Parameters:
    ///   - recorded: The payload the ledger recorded.
    ///   - signed: The payload its signed transaction holds.
    /// - Returns: The names of the differing fields, sorted; `["the payload"]` when they differ in no field JSON
    ///   shows; empty when they are equal.
    public static func differences(recorded: TransactionPayload, signed: TransactionPayload) -> [String] {
        guard recorded != signed else { return [] }
        let encoder = AppStoreJSON.makeEncoder()
        func fields(_ payload: TransactionPayload) -> [String: String] {
            guard let data = try? encoder.encode(payload),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return [:] }
            return object.mapValues { value in
                (try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]))
                    .map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
            }
        }
        let left = fields(recorded)
        let right = fields(signed)
        let differing = Set(left.keys).union(right.keys).sorted().filter { left[$0] != right[$0] }
        return differing.isEmpty ? ["the payload"] : differing
    }
}
