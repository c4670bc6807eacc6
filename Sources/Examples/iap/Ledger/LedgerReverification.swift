import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap ledger check --reverify`: every signed transaction the ledger keeps is verified again and compared with the
/// payload recorded beside it.
struct LedgerReverification {
    /// An entry whose signed transaction does not verify, cannot be read, or says something else than the entry.
    struct Problem {
        let transactionId: String
        let code: IAPError.Code
        let message: String

        var line: String { "\(code.rawValue): transaction \(transactionId): \(message)" }
    }

    /// Entries whose signed transaction verified and matches the recorded payload.
    var verified = 0
    /// Entries without a signed transaction that predate the ledger keeping them.
    var missing: [String] = []
    var problems: [Problem] = []

    /// Re-verifies every entry of `store` with `verifier`.
    static func run(
        _ store: some ListableEntitlementStore,
        verifier: AppStoreSignedDataVerifier
    ) async throws -> LedgerReverification {
        var result = LedgerReverification()
        let entries = try await store.allEntries()
        let signedFrom = try await store.firstSignedSequence()
        for (index, entry) in entries.enumerated() {
            if index > 0, index % 50_000 == 0 {
                Output.error("reverify: \(index) of \(entries.count) entries")
            }
            let signed: String?
            do {
                signed = try await store.signedTransaction(transactionId: entry.transactionId)
            } catch {
                let failure = IAPError.wrapping(error, as: .storageFailure, "cannot read its signed transaction")
                result.problems.append(
                    Problem(
                        transactionId: entry.transactionId,
                        code: failure.code,
                        message: "its signed transaction cannot be read back: \(failure.message)"
                    )
                )
                continue
            }
            guard let signed else {
                if entry.sequence < signedFrom {
                    result.missing.append(entry.transactionId)
                } else {
                    result.problems.append(
                        Problem(
                            transactionId: entry.transactionId,
                            code: .notFound,
                            message: "it was recorded without its signed transaction, though the ledger keeps them "
                                + "since sequence \(signedFrom): it cannot be verified again"
                        )
                    )
                }
                continue
            }
            let payload: TransactionPayload
            do {
                payload = try await verifier.verifyTransaction(signed)
            } catch {
                let failure = IAPError.wrapping(error, as: .internalError, "verification failed")
                result.problems.append(
                    Problem(
                        transactionId: entry.transactionId,
                        code: failure.code,
                        message: "its signed transaction does not verify: \(failure.message)"
                    )
                )
                continue
            }
            let differences = Self.differences(recorded: entry.transaction, signed: payload)
            guard differences.isEmpty else {
                result.problems.append(
                    Problem(
                        transactionId: entry.transactionId,
                        code: .storageCorrupted,
                        message: "the recorded payload differs from its signed transaction in "
                            + differences.joined(separator: ", ")
                    )
                )
                continue
            }
            result.verified += 1
        }
        return result
    }

    /// The fields (Apple's names) in which two payloads differ.
    static func differences(recorded: TransactionPayload, signed: TransactionPayload) -> [String] {
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
