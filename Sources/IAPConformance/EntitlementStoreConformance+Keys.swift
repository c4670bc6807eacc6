import IAPCore

extension EntitlementStoreConformance {
    /// The checks of appAccountToken bindings, renewal infos and processed notifications.
    static let keyedChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "bindingFirstWins",
            requirement: "the first bind of a token wins forever: binding it again to the same user is "
                + ".alreadyBound, to another user .conflict(existingUserId:) with the first user, and nothing changes",
            body: bindingFirstWins
        ),
        ConformanceCheck(
            name: "bindingIgnoresTokenCase",
            requirement: "appAccountTokens are compared case-insensitively by bind and user(forAppAccountToken:)",
            body: bindingIgnoresTokenCase
        ),
        ConformanceCheck(
            name: "concurrentBindsOfOneToken",
            requirement: "of 100 concurrent binds of one token to different users exactly one returns .bound, and "
                + "every other returns .conflict with that user",
            body: concurrentBindsOfOneToken
        ),
        ConformanceCheck(
            name: "renewalInfoNewerWins",
            requirement: "storeRenewalInfo keeps, per original transaction id, the renewal info with the latest "
                + "signedDate: a later one returns true, an equal, earlier or undated one returns false and "
                + "changes nothing",
            body: renewalInfoNewerWins
        ),
        ConformanceCheck(
            name: "renewalInfoRequiresOriginalTransactionId",
            requirement: "storeRenewalInfo without an originalTransactionId (or with an empty one) throws "
                + "IAPError(.invalidArgument) and stores nothing",
            body: renewalInfoRequiresOriginalTransactionId
        ),
        ConformanceCheck(
            name: "notificationMarkedOnce",
            requirement: "markNotificationProcessed returns true the first time for a UUID and false after, and "
                + "isNotificationProcessed follows",
            body: notificationMarkedOnce
        ),
        ConformanceCheck(
            name: "concurrentNotificationMarks",
            requirement: "of 100 concurrent marks of one notification UUID exactly one returns true",
            body: concurrentNotificationMarks
        ),
    ]

    private typealias Fixtures = ConformanceFixtures

    private static let token = "6f1c2b7e-3d4a-4f8e-9b2c-1a5d7e9f0c3b"

    @Sendable
    private static func bindingFirstWins(_ store: any EntitlementStore) async throws {
        let before = try await store.user(forAppAccountToken: token)
        try Fixtures.require(before == nil, "an unbound token is reported as bound to \(before ?? "")")
        let steps: [(user: String, expected: BindingOutcome)] = [
            ("user-1", .bound),
            ("user-1", .alreadyBound),
            ("user-2", .conflict(existingUserId: "user-1")),
            ("user-1", .alreadyBound),
            ("user-3", .conflict(existingUserId: "user-1")),
        ]
        var problems: [String] = []
        for (index, step) in steps.enumerated() {
            let outcome = try await store.bind(appAccountToken: token, to: step.user)
            if outcome != step.expected {
                problems.append(
                    "bind #\(index + 1) of the token to \(step.user) returned .\(outcome); expected .\(step.expected)"
                )
            }
        }
        let owner = try await store.user(forAppAccountToken: token)
        if owner != "user-1" {
            problems.append(
                "after binds to user-1, then user-2 and user-3, the token belongs to \(owner ?? "nobody"); the first "
                    + "binding (user-1) must win forever"
            )
        }
        let other = try await store.user(forAppAccountToken: "00000000-0000-0000-0000-000000000000")
        if other != nil {
            problems.append("a token never bound is reported as bound to \(other ?? "")")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func bindingIgnoresTokenCase(_ store: any EntitlementStore) async throws {
        let upper = token.uppercased()
        var problems: [String] = []
        let first = try await store.bind(appAccountToken: token, to: "user-1")
        if first != .bound {
            problems.append("the first bind of a lowercase token returned .\(first); expected .bound")
        }
        let same = try await store.bind(appAccountToken: upper, to: "user-1")
        if same != .alreadyBound {
            problems.append(
                "binding the same token in upper case to the same user returned .\(same); expected .alreadyBound"
            )
        }
        let other = try await store.bind(appAccountToken: upper, to: "user-2")
        if other != .conflict(existingUserId: "user-1") {
            problems.append(
                "binding the same token in upper case to another user returned .\(other); expected "
                    + ".conflict(existingUserId: \"user-1\")"
            )
        }
        let owner = try await store.user(forAppAccountToken: upper)
        if owner != "user-1" {
            problems.append(
                "user(forAppAccountToken:) of the upper-case token returned \(owner ?? "nil"); expected user-1"
            )
        }
        let mixed = "A0B1C2D3-e4f5-4a6b-8c7d-9E0F1A2B3C4D"
        _ = try await store.bind(appAccountToken: mixed, to: "user-3")
        let lowerOwner = try await store.user(forAppAccountToken: mixed.lowercased())
        if lowerOwner != "user-3" {
            problems.append(
                "a token bound in mixed case is found by its lower-case form as \(lowerOwner ?? "nil"); expected user-3"
            )
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func concurrentBindsOfOneToken(_ store: any EntitlementStore) async throws {
        let users = 100
        let outcomes = try await withThrowingTaskGroup(of: (String, BindingOutcome).self) { group in
            for index in 0..<users {
                group.addTask {
                    // Half of the binders spell the token in upper case.
                    let spelling = index.isMultiple(of: 2) ? token : token.uppercased()
                    return ("user-\(index)", try await store.bind(appAccountToken: spelling, to: "user-\(index)"))
                }
            }
            var outcomes: [(String, BindingOutcome)] = []
            for try await outcome in group {
                outcomes.append(outcome)
            }
            return outcomes
        }
        let winners = outcomes.filter { $0.1 == .bound }.map(\.0)
        try Fixtures.require(
            winners.count == 1,
            "\(users) concurrent binds of one token to different users returned .bound \(winners.count) times "
                + "(\(winners.prefix(5).joined(separator: ", "))\(winners.count > 5 ? ", ..." : "")); exactly one may "
                + "(write the binding only if the token is unbound, in one atomic step)"
        )
        let winner = winners[0]
        let wrong = outcomes.filter { $0.0 != winner && $0.1 != .conflict(existingUserId: winner) }
        try Fixtures.require(
            wrong.isEmpty,
            "\(wrong.count) losing binders did not get .conflict(existingUserId: \"\(winner)\"); for example "
                + (wrong.first.map { "\($0.0) got .\($0.1)" } ?? "")
        )
        let owner = try await store.user(forAppAccountToken: token)
        try Fixtures.require(
            owner == winner,
            "after the concurrent binds the token belongs to \(owner ?? "nobody"), not to \(winner), whose bind "
                + "returned .bound: a later binder overwrote it"
        )
    }

    @Sendable
    private static func renewalInfoNewerWins(_ store: any EntitlementStore) async throws {
        var problems: [String] = []
        func step(
            _ label: String,
            _ info: RenewalInfoPayload,
            expect expected: Bool,
            thenStored stored: RenewalInfoPayload
        ) async throws {
            let accepted = try await store.storeRenewalInfo(info)
            if accepted != expected {
                problems.append("storeRenewalInfo of \(label) returned \(accepted); expected \(expected)")
            }
            let read = try await store.renewalInfo(originalTransactionId: "sub-1")
            if read != stored {
                problems.append(
                    "after storeRenewalInfo of \(label), the stored renewal info is "
                        + (read.map {
                            "the one signed at \($0.signedDate.map { "\($0)" } ?? "no date") for \($0.productId ?? "")"
                        }
                            ?? "nil")
                        + "; expected the one signed at \(stored.signedDate.map { "\($0)" } ?? "no date") for "
                        + "\(stored.productId ?? "")"
                )
            }
        }
        let first = Fixtures.renewalInfo("sub-1", signedAt: 100, productId: "monthly")
        let newer = Fixtures.renewalInfo("sub-1", signedAt: 200, productId: "yearly")
        let older = Fixtures.renewalInfo("sub-1", signedAt: 150, productId: "weekly")
        let equal = Fixtures.renewalInfo("sub-1", signedAt: 200, productId: "daily")
        let undated = Fixtures.renewalInfo("sub-1", signedAt: nil, productId: "undated")
        let unknown = try await store.renewalInfo(originalTransactionId: "sub-1")
        if unknown != nil {
            problems.append("renewalInfo of a subscription never stored is not nil")
        }
        try await step("the first renewal info (signed at +100 s)", first, expect: true, thenStored: first)
        try await step("a newer one (signed at +200 s)", newer, expect: true, thenStored: newer)
        try await step("an older one (signed at +150 s), arriving late", older, expect: false, thenStored: newer)
        try await step(
            "an equally new one (signed at +200 s) with other content",
            equal,
            expect: false,
            thenStored: newer
        )
        try await step("one without a signedDate", undated, expect: false, thenStored: newer)

        let otherSubscription = Fixtures.renewalInfo("sub-2", signedAt: 50, productId: "monthly")
        let accepted = try await store.storeRenewalInfo(otherSubscription)
        let otherRead = try await store.renewalInfo(originalTransactionId: "sub-2")
        if !accepted || otherRead != otherSubscription {
            problems.append(
                "a renewal info of another subscription (sub-2), older than sub-1's, was not stored on its own: "
                    + "renewal infos are kept per originalTransactionId"
            )
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func renewalInfoRequiresOriginalTransactionId(_ store: any EntitlementStore) async throws {
        let stored = Fixtures.renewalInfo("sub-1", signedAt: 100, productId: "monthly")
        _ = try await store.storeRenewalInfo(stored)
        var problems: [String] = []
        for (label, originalTransactionId) in [("without an originalTransactionId", nil), ("with an empty one", "")] {
            let invalid = Fixtures.renewalInfo(originalTransactionId, signedAt: 999, productId: "yearly")
            let problem = await Fixtures.invalidArgumentProblem("storeRenewalInfo of a renewal info \(label)") {
                try await store.storeRenewalInfo(invalid)
            }
            problems += problem.map { [$0] } ?? []
        }
        let empty = try await store.renewalInfo(originalTransactionId: "")
        if empty != nil {
            problems.append("a renewal info without an originalTransactionId was stored under the empty id")
        }
        let kept = try await store.renewalInfo(originalTransactionId: "sub-1")
        if kept != stored {
            problems.append("storing an invalid renewal info changed the one stored for sub-1")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func notificationMarkedOnce(_ store: any EntitlementStore) async throws {
        let uuid = "002e14d5-51f5-4503-b5a8-c3a1af68eb20"
        var problems: [String] = []
        if try await store.isNotificationProcessed(uuid) {
            problems.append("isNotificationProcessed is true for a notification never marked")
        }
        if try await !store.markNotificationProcessed(uuid, at: Fixtures.date(0)) {
            problems.append("the first markNotificationProcessed of a UUID returned false; expected true")
        }
        if try await !store.isNotificationProcessed(uuid) {
            problems.append("isNotificationProcessed is false after markNotificationProcessed")
        }
        if try await store.markNotificationProcessed(uuid, at: Fixtures.date(10)) {
            problems.append("the second markNotificationProcessed of a UUID returned true; expected false")
        }
        if try await store.isNotificationProcessed("9a0b1c2d-0000-4000-8000-000000000000") {
            problems.append("isNotificationProcessed is true for another UUID, never marked")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func concurrentNotificationMarks(_ store: any EntitlementStore) async throws {
        let uuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
        let marks = 100
        let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<marks {
                group.addTask {
                    try await store.markNotificationProcessed(uuid, at: Fixtures.date(Int64(index)))
                }
            }
            var firsts = 0
            for try await first in group where first {
                firsts += 1
            }
            return firsts
        }
        try Fixtures.require(
            firsts == 1,
            "\(marks) concurrent marks of one notification UUID returned true \(firsts) times; exactly one may, or "
                + "the notification's effect is applied more than once"
        )
        try Fixtures.require(
            try await store.isNotificationProcessed(uuid),
            "isNotificationProcessed is false after the concurrent marks"
        )
    }
}
