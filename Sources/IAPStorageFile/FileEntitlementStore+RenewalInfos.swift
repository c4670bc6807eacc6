public import IAPCore

extension FileEntitlementStore {
    /// Stores a subscription's renewal info if its `signedDate` is later than the stored one's.
    ///
    /// - Parameter renewalInfo: The verified renewal info.
    /// - Returns: `true` if stored, `false` if an equally new or newer one was already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id, or `storageFailure`.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        try checkOpen()
        guard let originalTransactionId = try state.planRenewalInfo(renewalInfo) else {
            return try await answer(false)
        }
        let lsn = try append(.renewal(renewalInfo)) {
            $0.storeRenewalInfo(renewalInfo, for: originalTransactionId)
        }
        try await waitUntilDurable(lsn)
        return true
    }

    /// The latest renewal info of a subscription, or `nil`.
    public func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        try checkOpen()
        return try await answer(state.renewalInfos[originalTransactionId])
    }
}
