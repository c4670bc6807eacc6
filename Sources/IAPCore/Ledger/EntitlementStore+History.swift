extension EntitlementStore {
    /// Every entry of a user, newest first, read page by page through ``history(userId:cursor:limit:)``.
    ///
    /// For a whole account at once (an entitlement snapshot, an export); a user interface pages with
    /// ``history(userId:cursor:limit:)`` instead.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - pageSize: How many entries each read takes (at least 1).
    /// - Returns: The entries, by descending `sequence`.
    /// - Throws: ``IAPError`` from the store.
    public func allHistory(userId: String, pageSize: Int = 500) async throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        var cursor: String?
        repeat {
            let page = try await history(userId: userId, cursor: cursor, limit: pageSize)
            entries += page.entries
            cursor = page.nextCursor
        } while cursor != nil
        return entries
    }
}
