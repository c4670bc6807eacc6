import IAPCore

/// A support audit that keeps nothing and refuses every append: for an ``OrderLookup`` asked only to look up without
/// an audit (``OrderLookup/lookUpWithoutAudit(orderId:)``, `iap support lookup-order --no-audit-lookups`).
///
/// An action that would be audited (a lookup with an actor, a redelivery) fails with `unsupportedOperation` before
/// it acts, since ``checkWritable()`` throws too.
public struct DisabledSupportAuditLog: SupportAuditLog {
    /// Creates the log.
    public init() {}

    /// Throws `unsupportedOperation`: nothing is audited.
    public func append(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry {
        throw Self.refusal
    }

    /// No entries.
    public func entries() async throws -> [SupportAuditEntry] {
        []
    }

    /// Throws `unsupportedOperation`: there is no log to check.
    public func verify() async throws -> SupportAuditVerification {
        throw Self.refusal
    }

    /// Throws `unsupportedOperation`: nothing is audited.
    public func checkWritable() async throws {
        throw Self.refusal
    }

    private static var refusal: IAPError {
        IAPError(.unsupportedOperation, "support actions are not audited here, so none is taken")
    }
}
