#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A ledger that can list every entry it holds, say from which entry on it keeps signed transactions, and be closed:
/// what a tool that checks, exports or re-verifies a whole ledger needs beyond ``EntitlementStore``.
///
/// ``LedgerInvariants`` and ``LedgerReverification`` read a ledger through it, and a ledger site (`LedgerSite` in
/// `IAPServerAPI`) hands one out.
///
/// ## Implementation requirements
/// - ``allEntries()`` returns every entry once, by ascending ``LedgerEntry/sequence``, as of one moment.
/// - ``entries(afterSequence:limit:)`` returns up to `limit` (1 to 10,000) entries with a sequence above the one given,
///   by ascending sequence: the ledger a page at a time, so that a tool walking a large ledger holds one page in
///   memory (``forEachPage(size:_:)``); a limit out of range throws `invalidArgument`.
/// - ``indexProblems()`` names every entry the store's own lookups (one by transaction id, a user's history, a
///   purchase family) would miss or find twice; the default reads the whole ledger and asks each lookup, a store that
///   keeps its lookups apart from its entries (columns beside a document) checks them where they are.
/// - ``firstSignedSequence()`` never changes once entries exist: an entry at that sequence or later was recorded
///   with its signed transaction (``EntitlementStore/signedTransaction(transactionId:)`` finds it); earlier ones may
///   predate the store keeping them.
/// - After ``close()``, every call throws ``IAPError`` `storageFailure`; closing twice is harmless.
///
/// `FileEntitlementStore` (in `IAPStorageFile`), `PostgresEntitlementStore` (in `IAPStoragePostgres`) and
/// `InMemoryEntitlementStore` (in `IAPInMemory`) implement it.
public protocol ListableEntitlementStore: IdentifiedEntitlementStore {
    /// Every entry, by ascending sequence.
    ///
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` when the store cannot be read.
    func allEntries() async throws -> [LedgerEntry]

    /// Up to `limit` entries with a sequence above `sequence`, by ascending sequence.
    ///
    /// - Parameters:
    ///   - sequence: 0 for the first page, then the last sequence of the previous page.
    ///   - limit: The most entries to return (1 to 10,000).
    /// - Returns: The entries; fewer than `limit` at the end.
    /// - Throws: ``IAPError`` `invalidArgument` for a limit out of range; when the store cannot be read.
    func entries(afterSequence sequence: Int64, limit: Int) async throws -> [LedgerEntry]

    /// Where the store's lookups disagree with its entries: a transaction recorded twice, a user's history or a
    /// purchase family that lists other entries than the ledger holds for it. ``LedgerInvariants`` adds these to what
    /// it finds in the entries themselves.
    ///
    /// - Returns: One sentence per problem; empty when every lookup finds exactly its entries.
    /// - Throws: ``IAPError`` when the store cannot be read.
    func indexProblems() async throws -> [String]

    /// The entries a deliverer has claimed, at `instant`: being delivered, or left by a deliverer that stopped.
    ///
    /// - Parameter instant: The instant the claims are judged at (the clock's now).
    /// - Returns: The counts.
    /// - Throws: ``IAPError`` when the store cannot be read.
    func claims(at instant: Date) async throws -> ClaimCounts

    /// The first entry sequence that is recorded with its signed transaction; earlier entries predate the store
    /// keeping them.
    ///
    /// - Returns: The sequence (1 when the store always kept them).
    /// - Throws: ``IAPError`` when the store cannot be read.
    func firstSignedSequence() async throws -> Int64

    /// Releases what the store holds (files, locks, connections); later calls throw.
    func close() async
}

extension ListableEntitlementStore {
    /// A page of ``allEntries()``, for a store that lists only the whole ledger (it reads the whole ledger for each
    /// page: a store of its own should answer from an index).
    public func entries(afterSequence sequence: Int64, limit: Int) async throws -> [LedgerEntry] {
        try Self.checkPageLimit(limit)
        return Array(try await allEntries().lazy.filter { $0.sequence > sequence }.prefix(limit))
    }

    /// Walks the whole ledger a page at a time, by ascending sequence: memory for one page, whatever the ledger's size.
    ///
    /// Entries inserted during the walk are seen if their page is not read yet; an entry changed during the walk is
    /// seen as its page was read (each page is one moment, the walk is not).
    ///
    /// - Parameters:
    ///   - size: Entries per page (1 to 10,000).
    ///   - body: Called with each page, in order; a throw stops the walk.
    /// - Throws: What the store or `body` throws.
    public func forEachPage(
        size: Int = 2_000,
        _ body: ([LedgerEntry]) async throws -> Void
    ) async throws {
        try Self.checkPageLimit(size)
        var last: Int64 = 0
        while true {
            let page = try await entries(afterSequence: last, limit: size)
            if !page.isEmpty {
                try await body(page)
            }
            guard let end = page.last, page.count == size else {
                return
            }
            last = end.sequence
        }
    }

    /// Reads every entry and asks the store's lookups for each transaction id, user and purchase family: memory for
    /// the whole ledger, as a store that holds the whole ledger in memory already does.
    public func indexProblems() async throws -> [String] {
        let entries = try await allEntries()
        var problems: [String] = []
        var seen: Set<String> = []
        for entry in entries where !seen.insert(entry.transactionId).inserted {
            problems.append("transaction \(entry.transactionId) is recorded twice")
        }
        for (key, own) in Dictionary(grouping: entries, by: { UserKey($0.userId) }) {
            let user = key.id
            let listed = try await allHistory(userId: user)
            if listed.map(\.transactionId).sorted() != own.map(\.transactionId).sorted() {
                problems.append(
                    "the history of user \(user) lists \(listed.count) entries, the ledger holds \(own.count)"
                )
            }
            if listed.map(\.sequence) != listed.map(\.sequence).sorted(by: >) {
                problems.append("the history of user \(user) is not newest first")
            }
        }
        for (original, family) in Dictionary(grouping: entries, by: \.originalTransactionId) {
            let listed = try await self.entries(originalTransactionId: original)
            if Set(listed.map(\.transactionId)) != Set(family.map(\.transactionId)) {
                problems.append(
                    "original transaction \(original) lists \(listed.count) entries, the ledger holds \(family.count)"
                )
            }
        }
        return problems
    }

    /// Walks the whole ledger a page at a time: a store of its own should answer from its index of undelivered
    /// entries.
    public func claims(at instant: Date) async throws -> ClaimCounts {
        var counts = ClaimCounts()
        try await forEachPage { page in
            for entry in page {
                counts.count(entry, at: instant)
            }
        }
        return counts
    }

    /// Throws `invalidArgument` unless a page limit is from 1 to 10,000.
    package static func checkPageLimit(_ limit: Int) throws {
        guard (1...10_000).contains(limit) else {
            throw IAPError(.invalidArgument, "a page of entries takes a limit from 1 to 10000, got \(limit)")
        }
    }
}
