public import IAPCore

extension FileEntitlementStore {
    /// Binds an appAccountToken to a user, once and for good.
    ///
    /// - Parameters:
    ///   - appAccountToken: The token, compared case-insensitively.
    ///   - userId: The user.
    /// - Returns: `.bound`, `.alreadyBound`, or `.conflict` with the user the token belongs to.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id, or `storageFailure`.
    public func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        try checkOpen()
        let token: String
        switch try state.planBind(appAccountToken: appAccountToken, to: userId) {
        case .answer(let outcome): return try await answer(outcome)
        case .bind(let planned): token = planned
        }
        let lsn = try append(.bind(token: token, userId: userId)) { $0.bind(token: token, to: userId) }
        try await waitUntilDurable(lsn)
        return .bound
    }

    /// The user an appAccountToken is bound to, or `nil`.
    public func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        try checkOpen()
        return try await answer(state.user(forAppAccountToken: appAccountToken))
    }
}
