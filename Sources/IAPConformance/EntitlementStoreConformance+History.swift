import IAPCore

extension EntitlementStoreConformance {
    /// The checks of `history(userId:cursor:limit:)` and `entries(originalTransactionId:)`.
    static let historyChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "historyIsNewestFirst",
            requirement: "history returns the user's entries by descending sequence, with a nil nextCursor when "
                + "nothing older is left",
            body: historyIsNewestFirst
        ),
        ConformanceCheck(
            name: "historyPagingCoversEveryEntryOnce",
            requirement: "paging through history with limits 1, 3 and 7 returns every entry exactly once, newest "
                + "first, in full pages, and ends with a nil nextCursor",
            body: historyPagingCoversEveryEntryOnce
        ),
        ConformanceCheck(
            name: "historyPagingIsStableUnderInserts",
            requirement: "entries inserted while a history walk is under way do not appear in its later pages, and "
                + "the walk neither skips nor repeats an entry",
            body: historyPagingIsStableUnderInserts
        ),
        ConformanceCheck(
            name: "historyIsPerUser",
            requirement: "history of a user holds only that user's entries, and an unknown user has an empty page",
            body: historyIsPerUser
        ),
        ConformanceCheck(
            name: "userIdsAreTheirBytes",
            requirement: "user ids are compared by their UTF-8 bytes, never by Unicode canonical equivalence: an NFC "
                + "and an NFD spelling of one name (and K and KELVIN SIGN) are different users in history, in token "
                + "bindings (.conflict with the first user's exact bytes) and in statistics().users",
            body: userIdsAreTheirBytes
        ),
        ConformanceCheck(
            name: "historyRejectsInvalidArguments",
            requirement: "history with a malformed cursor (including \"\") or a limit below 1 throws "
                + "IAPError(.invalidArgument)",
            body: historyRejectsInvalidArguments
        ),
        ConformanceCheck(
            name: "entriesByOriginalTransactionId",
            requirement: "entries(originalTransactionId:) returns exactly the family's entries by ascending sequence",
            body: entriesByOriginalTransactionId
        ),
        ConformanceCheck(
            name: "entriesByAppTransactionId",
            requirement: "entries(appTransactionId:) returns exactly the entries whose transaction carries the app "
                + "transaction id, whoever owns them, by ascending sequence, follows a replace that changes it, "
                + "compares exactly, and returns nothing for an unknown id",
            body: entriesByAppTransactionId
        ),
        ConformanceCheck(
            name: "originalTransactionIdsWalkEveryFamilyOnce",
            requirement: "originalTransactionIds(cursor:limit:) walks every family once, by its first entry, with "
                + "limits 1 and 100, picks up families added during the walk, and throws IAPError(.invalidArgument) "
                + "for a limit below 1 or the cursor \"\"",
            body: originalTransactionIdsWalkEveryFamilyOnce
        ),
    ]

    @Sendable
    private static func originalTransactionIdsWalkEveryFamilyOnce(_ store: any EntitlementStore) async throws {
        let layout: [(id: String, original: String)] = [
            ("f-1", "family-a"), ("f-2", "family-b"), ("f-3", "family-a"), ("f-4", "family-c"), ("f-5", "family-b"),
        ]
        for (index, item) in layout.enumerated() {
            _ = try await Fixtures.insertNew(
                Fixtures.entry(item.id, user: "user-\(index % 2)", original: item.original, second: Int64(index)),
                into: store
            )
        }
        for limit in [1, 100] {
            var found: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await store.originalTransactionIds(cursor: cursor, limit: limit)
                try Fixtures.require(
                    page.originalTransactionIds.count <= limit,
                    "a page with limit \(limit) held \(page.originalTransactionIds.count) ids"
                )
                found += page.originalTransactionIds
                cursor = page.nextCursor
                pages += 1
                if limit == 1, pages == 2 {
                    _ = try await Fixtures.insertNew(
                        Fixtures.entry("f-new-\(limit)", user: "user-9", original: "family-new-\(limit)", second: 9),
                        into: store
                    )
                }
            } while cursor != nil && pages < 100
            // The family added during the first walk comes after the others in both walks.
            let expected = ["family-a", "family-b", "family-c", "family-new-1"]
            try Fixtures.require(
                found == expected,
                "walking the families with limit \(limit) returned \(found); expected \(expected), each once, in the "
                    + "order of their first entry"
            )
        }
        try await Fixtures.requireInvalidArgument("originalTransactionIds with limit 0") {
            try await store.originalTransactionIds(cursor: nil, limit: 0)
        }
        try await Fixtures.requireInvalidArgument("originalTransactionIds with the cursor \"\"") {
            try await store.originalTransactionIds(cursor: "", limit: 10)
        }
    }

    private typealias Fixtures = ConformanceFixtures

    /// Inserts `count` entries for `user`, each followed by one for `other`; returns the user's entries as stored.
    private static func insertInterleaved(
        _ count: Int,
        user: String,
        other: String,
        into store: any EntitlementStore
    ) async throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        for index in 0..<count {
            let second = Int64(index * 2)
            entries.append(
                try await Fixtures.insertNew(
                    Fixtures.entry("\(user)-t\(index)", user: user, second: second),
                    into: store
                )
            )
            _ = try await Fixtures.insertNew(
                Fixtures.entry("\(other)-t\(index)", user: other, second: second + 1),
                into: store
            )
        }
        return entries
    }

    /// Walks a user's whole history with one limit; returns the entries in page order and the page sizes.
    ///
    /// Between pages it calls `betweenPages` with the number of pages read so far.
    private static func walkHistory(
        of user: String,
        limit: Int,
        in store: any EntitlementStore,
        betweenPages: (Int) async throws -> Void = { _ in }
    ) async throws -> (entries: [LedgerEntry], pageSizes: [Int]) {
        var entries: [LedgerEntry] = []
        var pageSizes: [Int] = []
        var cursor: String?
        repeat {
            let page = try await store.history(userId: user, cursor: cursor, limit: limit)
            try Fixtures.require(
                page.entries.count <= limit,
                "history with limit \(limit) returned \(page.entries.count) entries"
            )
            entries += page.entries
            pageSizes.append(page.entries.count)
            try Fixtures.require(
                pageSizes.count <= 500,
                "history of \(user) with limit \(limit) still returns a nextCursor after 500 pages "
                    + "(\(entries.count) entries); the walk does not end"
            )
            cursor = page.nextCursor
            if cursor != nil {
                try await betweenPages(pageSizes.count)
            }
        } while cursor != nil
        return (entries, pageSizes)
    }

    @Sendable
    private static func historyIsNewestFirst(_ store: any EntitlementStore) async throws {
        let empty = try await store.history(userId: "user-1", cursor: nil, limit: 10)
        try Fixtures.require(
            empty.entries.isEmpty && empty.nextCursor == nil,
            "history of a user without entries returned \(Fixtures.describeValue(empty)); expected an empty page "
                + "with a nil nextCursor"
        )
        let inserted = try await insertInterleaved(10, user: "user-1", other: "user-2", into: store)
        let expected = Array(inserted.reversed())
        let page = try await store.history(userId: "user-1", cursor: nil, limit: 10)
        try Fixtures.require(
            page.entries.map(\.transactionId) == expected.map(\.transactionId),
            "history of user-1 returned \(Fixtures.ids(page.entries)); expected newest first \(Fixtures.ids(expected))"
        )
        try Fixtures.require(
            page.entries == expected,
            "history of user-1 returned entries that differ from the stored ones"
        )
        try Fixtures.require(
            page.nextCursor == nil,
            "history of user-1 with limit 10 returned all 10 entries but nextCursor \(page.nextCursor ?? "nil"); "
                + "it must be nil when no older entry exists"
        )
    }

    @Sendable
    private static func historyPagingCoversEveryEntryOnce(_ store: any EntitlementStore) async throws {
        let inserted = try await insertInterleaved(21, user: "user-1", other: "user-2", into: store)
        let expected = inserted.reversed().map(\.transactionId)
        var problems: [String] = []
        for limit in [1, 3, 7] {
            let walk = try await walkHistory(of: "user-1", limit: limit, in: store)
            let ids = walk.entries.map(\.transactionId)
            if ids != expected {
                let repeated = Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
                let missing = Set(expected).subtracting(ids).sorted()
                problems.append(
                    "paging with limit \(limit) returned \(ids.count) entries in order "
                        + "[\(ids.joined(separator: ", "))]; expected the 21 entries newest first "
                        + "[\(expected.joined(separator: ", "))]"
                        + (repeated.isEmpty ? "" : "; repeated: \(repeated.joined(separator: ", "))")
                        + (missing.isEmpty ? "" : "; missing: \(missing.joined(separator: ", "))")
                )
            }
            let fullPages = walk.pageSizes.dropLast().allSatisfy { $0 == limit }
            if !fullPages || walk.pageSizes.last == 0 {
                problems.append(
                    "paging with limit \(limit) returned pages of sizes \(walk.pageSizes); every page but the last "
                        + "must be full, and a page with a nextCursor must not be followed by an empty one"
                )
            }
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func historyPagingIsStableUnderInserts(_ store: any EntitlementStore) async throws {
        let inserted = try await insertInterleaved(12, user: "user-1", other: "user-2", into: store)
        let expected = inserted.reversed().map(\.transactionId)
        let walk = try await walkHistory(of: "user-1", limit: 3, in: store) { pagesRead in
            for index in 0..<2 {
                let id = "user-1-late-\(pagesRead)-\(index)"
                _ = try await Fixtures.insertNew(
                    Fixtures.entry(id, user: "user-1", second: Int64(1_000 + pagesRead * 10 + index)),
                    into: store
                )
            }
        }
        let ids = walk.entries.map(\.transactionId)
        let late = ids.filter { $0.contains("-late-") }
        try Fixtures.require(
            late.isEmpty,
            "entries inserted during the walk showed up in its later pages: \(late.joined(separator: ", ")); "
                + "a cursor must continue below the last sequence it returned, not at an offset"
        )
        try Fixtures.require(
            ids == expected,
            "a history walk with limit 3, while 2 entries were inserted after each page, returned "
                + "[\(ids.joined(separator: ", "))]; expected [\(expected.joined(separator: ", "))]"
        )
        let fresh = try await walkHistory(of: "user-1", limit: 5, in: store)
        try Fixtures.require(
            fresh.entries.count == 12 + 2 * (walk.pageSizes.count - 1),
            "a new walk after the inserts returned \(fresh.entries.count) entries; expected the 12 old ones and "
                + "the \(2 * (walk.pageSizes.count - 1)) inserted during the first walk"
        )
    }

    @Sendable
    private static func historyIsPerUser(_ store: any EntitlementStore) async throws {
        let first = try await insertInterleaved(4, user: "user-1", other: "user-2", into: store)
        let firstPage = try await store.history(userId: "user-1", cursor: nil, limit: 100)
        let secondPage = try await store.history(userId: "user-2", cursor: nil, limit: 100)
        try Fixtures.require(
            firstPage.entries.map(\.transactionId) == first.reversed().map(\.transactionId),
            "history of user-1 returned \(Fixtures.ids(firstPage.entries)); expected only user-1's 4 entries"
        )
        try Fixtures.require(
            secondPage.entries.allSatisfy { $0.userId == "user-2" } && secondPage.entries.count == 4,
            "history of user-2 returned \(Fixtures.ids(secondPage.entries)); expected only user-2's 4 entries"
        )
        for unknown in ["user-3", "USER-1", "user"] {
            let page = try await store.history(userId: unknown, cursor: nil, limit: 100)
            try Fixtures.require(
                page.entries.isEmpty && page.nextCursor == nil,
                "history of \(unknown), who has no entries, returned \(Fixtures.describeValue(page)); user ids are "
                    + "compared exactly"
            )
        }
    }

    @Sendable
    private static func userIdsAreTheirBytes(_ store: any EntitlementStore) async throws {
        // Swift's String == says each pair is equal; their bytes differ.
        let pairs = [("m\u{00FC}ller", "mu\u{0308}ller"), ("Kelvin", "\u{212A}elvin")]
        func bytes(_ id: String?) -> [UInt8] { Array((id ?? "").utf8) }
        var problems: [String] = []
        let before = try await store.statistics().users
        for (index, pair) in pairs.enumerated() {
            let first = try await Fixtures.insertNew(
                Fixtures.entry("bytes-\(index)-a", user: pair.0, second: Int64(index * 2)),
                into: store
            )
            let second = try await Fixtures.insertNew(
                Fixtures.entry("bytes-\(index)-b", user: pair.1, second: Int64(index * 2 + 1)),
                into: store
            )
            for (user, own) in [(pair.0, first), (pair.1, second)] {
                let page = try await store.history(userId: user, cursor: nil, limit: 100)
                if page.entries.map(\.transactionId) != [own.transactionId]
                    || bytes(page.entries.first?.userId) != bytes(user)
                {
                    problems.append(
                        "history of \(Array(user.unicodeScalars).map { String($0.value, radix: 16) }) returned "
                            + "\(Fixtures.ids(page.entries)); expected only \(own.transactionId), its user's bytes kept"
                    )
                }
            }
            let token = "6f1c2b7e-3d4a-4f8e-9b2c-1a5d7e9f0c4\(index)"
            _ = try await store.bind(appAccountToken: token, to: pair.0)
            let other = try await store.bind(appAccountToken: token, to: pair.1)
            if case .conflict(let holder) = other, bytes(holder) == bytes(pair.0) {
                // As required.
            } else {
                problems.append(
                    "binding a token bound to one spelling to the other returned .\(other); expected .conflict with the "
                        + "first spelling's bytes"
                )
            }
            let holder = try await store.user(forAppAccountToken: token)
            if bytes(holder) != bytes(pair.0) {
                problems.append("the token is bound to a user whose bytes are not the first spelling's")
            }
        }
        let users = try await store.statistics().users - before
        if users != 4 {
            problems.append("statistics().users grew by \(users) for four users of two names each; expected 4")
        }
        try Fixtures.require(problems.isEmpty, problems.joined(separator: "; "))
    }

    @Sendable
    private static func historyRejectsInvalidArguments(_ store: any EntitlementStore) async throws {
        _ = try await insertInterleaved(3, user: "user-1", other: "user-2", into: store)
        var problems: [String] = []
        for cursor in ["", "not a cursor ☃ %%%", "\u{0}\u{1}"] {
            let problem = await Fixtures.invalidArgumentProblem("history with the malformed cursor \"\(cursor)\"") {
                try await store.history(userId: "user-1", cursor: cursor, limit: 10)
            }
            problems += problem.map { [$0] } ?? []
        }
        for limit in [0, -1] {
            let problem = await Fixtures.invalidArgumentProblem("history with limit \(limit)") {
                try await store.history(userId: "user-1", cursor: nil, limit: limit)
            }
            problems += problem.map { [$0] } ?? []
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func entriesByOriginalTransactionId(_ store: any EntitlementStore) async throws {
        var family: [LedgerEntry] = []
        for index in 0..<4 {
            family.append(
                try await Fixtures.insertNew(
                    Fixtures.entry("renewal-\(3 - index)", user: "user-1", original: "family-a", second: Int64(index)),
                    into: store
                )
            )
            _ = try await Fixtures.insertNew(
                Fixtures.entry("other-\(index)", user: "user-1", original: "family-b", second: Int64(index)),
                into: store
            )
        }
        let read = try await store.entries(originalTransactionId: "family-a")
        try Fixtures.require(
            read == family,
            "entries(originalTransactionId: \"family-a\") returned \(Fixtures.ids(read)); expected the family in "
                + "insert order \(Fixtures.ids(family))"
        )
        let unknown = try await store.entries(originalTransactionId: "family-z")
        try Fixtures.require(
            unknown.isEmpty,
            "entries(originalTransactionId:) of an unknown family returned \(Fixtures.ids(unknown))"
        )
    }

    @Sendable
    private static func entriesByAppTransactionId(_ store: any EntitlementStore) async throws {
        func bought(_ id: String, user: String, account: String?, second: Int64) -> LedgerEntry {
            var entry = Fixtures.entry(id, user: user, second: second)
            entry.transaction.appTransactionId = account
            return entry
        }
        // One Apple Account used by two of the app's users, another account, and a purchase without one.
        var account: [LedgerEntry] = []
        account.append(
            try await Fixtures.insertNew(bought("a-1", user: "user-1", account: "704", second: 1), into: store)
        )
        _ = try await Fixtures.insertNew(bought("b-1", user: "user-3", account: "705", second: 2), into: store)
        account.append(
            try await Fixtures.insertNew(bought("a-2", user: "user-2", account: "704", second: 3), into: store)
        )
        _ = try await Fixtures.insertNew(bought("n-1", user: "user-1", account: nil, second: 4), into: store)
        let moved = try await Fixtures.insertNew(bought("b-2", user: "user-3", account: "705", second: 5), into: store)
        var read = try await store.entries(appTransactionId: "704")
        try Fixtures.require(
            read == account,
            "entries(appTransactionId: \"704\") returned \(Fixtures.ids(read)); expected \(Fixtures.ids(account))"
        )
        // Newer signed data of b-2 names account 704: it moves there.
        var changed = moved
        changed.transaction.appTransactionId = "704"
        account.append(try await Fixtures.replaceAccepted(changed, ifRevision: moved.revision, in: store))
        read = try await store.entries(appTransactionId: "704")
        try Fixtures.require(
            read == account,
            "after b-2's transaction named 704, entries(appTransactionId: \"704\") returned \(Fixtures.ids(read)); "
                + "expected \(Fixtures.ids(account))"
        )
        let other = try await store.entries(appTransactionId: "705")
        try Fixtures.require(
            other.map(\.transactionId) == ["b-1"],
            "entries(appTransactionId: \"705\") returned \(Fixtures.ids(other)); expected [b-1]"
        )
        for unknown in ["7040", "70", " 704", ""] {
            let found = try await store.entries(appTransactionId: unknown)
            try Fixtures.require(
                found.isEmpty,
                "entries(appTransactionId: \"\(unknown)\") returned \(Fixtures.ids(found)); expected nothing"
            )
        }
    }
}
