import IAPCore

/// One named check of ``EntitlementStoreConformance``.
struct ConformanceCheck: Sendable {
    /// The stable name callers pass to ``EntitlementStoreConformance/check(named:)``.
    let name: String
    /// What the contract requires, in one sentence, for the report.
    let requirement: String
    /// Runs the check against a fresh, empty store; throws ``ConformanceViolation`` when the store breaks
    /// the requirement.
    let body: @Sendable (any EntitlementStore) async throws -> Void
}
