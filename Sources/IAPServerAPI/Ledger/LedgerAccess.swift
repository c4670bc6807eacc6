/// How a ledger site is opened.
public enum LedgerAccess: Sendable, Hashable {
    /// To read: nothing is created, locked, repaired or written; a ledger that does not exist throws `notFound`. A
    /// file ledger may be held by another process meanwhile. The side stores that write (checkpoints, the support
    /// audit, the run lock, saving the catalog) throw `unsupportedOperation`.
    case readOnly
    /// To read and write a ledger that must exist (`notFound` otherwise).
    case readWrite
    /// To read and write, creating the ledger when there is none.
    case create
}
