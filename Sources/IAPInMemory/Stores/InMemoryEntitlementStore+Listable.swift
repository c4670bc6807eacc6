public import IAPCore

extension InMemoryEntitlementStore: ListableEntitlementStore {
    /// 1: the store keeps every entry's signed transaction.
    public func firstSignedSequence() async throws -> Int64 {
        1
    }

    /// Nothing to release: the store lives as long as it is referenced.
    public func close() async {}
}
