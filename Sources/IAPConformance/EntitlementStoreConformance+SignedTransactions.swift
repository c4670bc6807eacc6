#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension EntitlementStoreConformance {
    /// The checks of the signed transactions kept with entries.
    static let signedTransactionChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "signedTransactionsAreKept",
            requirement:
                "insert(_:signedTransaction:) keeps the JWS beside a new entry and signedTransaction(transactionId:) "
                + "reads it back exactly; a second insert leaves it; replace(_:ifRevision:) keeps it; "
                + "replace(_:ifRevision:signedTransaction:) replaces it (nil removes it), and not when its revision "
                + "is stale; a malformed JWS throws invalidArgument and changes nothing",
            body: signedTransactionsAreKept
        ),
        ConformanceCheck(
            name: "concurrentSignedReplacesOfOneRevision",
            requirement: "of 50 concurrent replace(_:ifRevision:signedTransaction:) of one entry with the same "
                + "revision exactly one returns true, and its signed transaction is the one stored",
            body: concurrentSignedReplacesOfOneRevision
        ),
    ]

    private typealias Fixtures = ConformanceFixtures

    @Sendable
    private static func signedTransactionsAreKept(_ store: any EntitlementStore) async throws {
        let first = Fixtures.signedTransaction("first", payloadBytes: 1_200)
        let second = Fixtures.signedTransaction("second", payloadBytes: 1_300)
        func require(_ transactionId: String, is expected: String?, _ when: String) async throws {
            let stored = try await store.signedTransaction(transactionId: transactionId)
            try Fixtures.require(
                stored == expected,
                "\(when), signedTransaction(transactionId: \"\(transactionId)\") returned "
                    + (stored.map { "a JWS of \($0.utf8.count) bytes" + (expected == nil ? "" : " that differs") }
                        ?? "nil")
                    + (expected.map { "; expected the \($0.utf8.count)-byte JWS given" } ?? "; expected nil")
            )
        }
        guard
            case .inserted(let stored) = try await store.insert(
                Fixtures.entry("t-1", user: "user-1"),
                signedTransaction: first
            )
        else {
            throw ConformanceViolation("insert(_:signedTransaction:) of a new transaction did not return .inserted")
        }
        try await require("t-1", is: first, "after insert(_:signedTransaction:)")
        _ = try await Fixtures.insertNew(Fixtures.entry("t-2", user: "user-1"), into: store)
        try await require("t-2", is: nil, "after an insert without one")
        try await require("t-unknown", is: nil, "for an id never inserted")

        _ = try await store.insert(Fixtures.entry("t-1", user: "user-1"), signedTransaction: second)
        try await require("t-1", is: first, "after a second insert of t-1 with another JWS")

        var next = stored
        next.deliveryState = .delivered
        try Fixtures.require(
            try await store.replace(next, ifRevision: 1),
            "replace of t-1 with its current revision 1 returned false"
        )
        try await require("t-1", is: first, "after replace(_:ifRevision:), which keeps it")
        try Fixtures.require(
            try await store.replace(next, ifRevision: 2, signedTransaction: second),
            "replace(_:ifRevision:signedTransaction:) of t-1 with its current revision 2 returned false"
        )
        try await require("t-1", is: second, "after replace(_:ifRevision:signedTransaction:) with a new JWS")
        try Fixtures.require(
            !(try await store.replace(next, ifRevision: 2, signedTransaction: first)),
            "replace(_:ifRevision:signedTransaction:) of t-1 with the stale revision 2 returned true"
        )
        try await require("t-1", is: second, "after a refused replace with a stale revision")

        for malformed in ["not a jws", "a..c", "a.b.c.d", "a.b.c\n", "a.b.c\"", "é.b.c", ""] {
            try await Fixtures.requireInvalidArgument("insert of t-3 with the signed transaction \"\(malformed)\"") {
                try await store.insert(Fixtures.entry("t-3", user: "user-1"), signedTransaction: malformed)
            }
            try await Fixtures.requireInvalidArgument("replace of t-1 with the signed transaction \"\(malformed)\"") {
                try await store.replace(next, ifRevision: 3, signedTransaction: malformed)
            }
        }
        try Fixtures.require(
            try await store.entry(transactionId: "t-3") == nil,
            "an insert refused for its malformed signed transaction recorded t-3"
        )
        try Fixtures.require(
            try await store.entry(transactionId: "t-1")?.revision == 3,
            "a replace refused for its malformed signed transaction changed t-1's revision"
        )
        try await require("t-1", is: second, "after replaces refused for a malformed JWS")

        try Fixtures.require(
            try await store.replace(next, ifRevision: 3, signedTransaction: nil),
            "replace(_:ifRevision:signedTransaction: nil) of t-1 with its current revision 3 returned false"
        )
        try await require("t-1", is: nil, "after replace(_:ifRevision:signedTransaction: nil)")
    }

    @Sendable
    private static func concurrentSignedReplacesOfOneRevision(_ store: any EntitlementStore) async throws {
        let stored = try await Fixtures.insertNew(Fixtures.entry("t-1", user: "user-1"), into: store)
        let winners = try await withThrowingTaskGroup(of: String?.self) { group in
            for attempt in 0..<50 {
                group.addTask {
                    var next = stored
                    next.deliveryAttempts = attempt + 1
                    let jws = Fixtures.signedTransaction("attempt-\(attempt)", payloadBytes: 200 + attempt)
                    return try await store.replace(next, ifRevision: stored.revision, signedTransaction: jws)
                        ? jws : nil
                }
            }
            var winners: [String] = []
            for try await winner in group {
                if let winner {
                    winners.append(winner)
                }
            }
            return winners
        }
        try Fixtures.require(winners.count == 1, "\(winners.count) of 50 concurrent replaces of revision 1 won")
        let kept = try await store.signedTransaction(transactionId: "t-1")
        try Fixtures.require(
            kept == winners.first,
            "the stored signed transaction is not the one of the replace that won"
        )
    }
}

extension ConformanceFixtures {
    /// A compact JWS of the shape Apple signs (a protected header with a certificate chain, a base64url payload,
    /// an 86-character signature), distinct per label. It is not signed: stores keep what they are given, and
    /// verifying is not their job.
    static func signedTransaction(_ label: String, payloadBytes: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let seed = label.utf8.reduce(UInt64(1_469_598_103_934_665_603)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        func segment(_ count: Int, salt: UInt64) -> String {
            var state = seed ^ salt
            return String(
                (0..<count).map { _ in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return alphabet[Int(state >> 58)]
                }
            )
        }
        return "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUl" + segment(4_000, salt: 1) + "." + segment(payloadBytes, salt: 2)
            + "." + segment(86, salt: 3)
    }
}
