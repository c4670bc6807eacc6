extension PostgresEntitlementStore {
    /// The fleet lock of a name on this ledger's database and schema: a ``PostgresAdvisoryLock`` on a connection of
    /// its own.
    ///
    /// - Parameter name: What the lock guards, such as `"reconcile"`.
    /// - Returns: The lock.
    /// - Throws: ``IAPError`` `invalidArgument` for a name that is empty, longer than 200 bytes or holds a NUL.
    public func exclusiveRunLock(named name: String) throws -> PostgresAdvisoryLock {
        try PostgresAdvisoryLock(name: name, configuration: configuration)
    }
}
