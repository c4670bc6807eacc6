extension DeliveryPipeline {
    /// Every decision a pipeline takes by policy rather than by the signed data, in one value: what a server built on
    /// the pipeline (`PurchaseServer.Configuration/delivery`) or a tool passes through whole, instead of copying each
    /// knob.
    ///
    /// The defaults are the safe ones for money: failed grants retried with backoff, a token nobody claimed waits for
    /// its owner, sandbox purchases granted (App Review needs them), a prorated refund keeps access, a product the
    /// catalog does not know is parked.
    ///
    /// ```swift
    /// var policies = DeliveryPipeline.Policies()
    /// policies.sandbox = .grantAndFlag  // granted, and reported
    /// policies.proratedRefunds = .revokeAccess
    /// policies.retry = RetryPolicy(maximumAttempts: 20)
    /// ```
    public struct Policies: Sendable {
        /// How failed grants are retried, and how long a delivery claim holds.
        public var retry: RetryPolicy
        /// Who owns a transaction whose appAccountToken no user has claimed, when no user is given.
        public var unclaimedTokens: UnclaimedTokenPolicy
        /// What purchases from a test environment get on a production server.
        public var sandbox: SandboxPolicy
        /// Whether an unclaimed appAccountToken may go to the user who claims it; `nil` lets the first claimant have
        /// it.
        public var tokenOwnership: TokenOwnershipCheck?
        /// What a prorated refund of a non-consumable or a subscription does; a consumable's always takes back its
        /// share.
        public var proratedRefunds: ProratedRefundPolicy
        /// What a purchase of a product the catalog does not know gets.
        public var unknownProducts: UnknownProductPolicy

        /// Creates the policies; every default is the pipeline's.
        ///
        /// - Parameters:
        ///   - retry: How failed grants are retried.
        ///   - unclaimedTokens: Who owns a transaction whose token no user has claimed: ``UnclaimedTokenPolicy/awaitOwner``.
        ///   - sandbox: What sandbox purchases get on a production server: ``SandboxPolicy/grant``.
        ///   - tokenOwnership: The check of an unclaimed token against its claimant; none by default.
        ///   - proratedRefunds: What a prorated refund does: ``ProratedRefundPolicy/keepAccess``.
        ///   - unknownProducts: What a purchase of an unknown product gets: ``UnknownProductPolicy/park``.
        public init(
            retry: RetryPolicy = RetryPolicy(),
            unclaimedTokens: UnclaimedTokenPolicy = .awaitOwner,
            sandbox: SandboxPolicy = .grant,
            tokenOwnership: TokenOwnershipCheck? = nil,
            proratedRefunds: ProratedRefundPolicy = .keepAccess,
            unknownProducts: UnknownProductPolicy = .park
        ) {
            self.retry = retry
            self.unclaimedTokens = unclaimedTokens
            self.sandbox = sandbox
            self.tokenOwnership = tokenOwnership
            self.proratedRefunds = proratedRefunds
            self.unknownProducts = unknownProducts
        }
    }

    /// The policies this pipeline runs with (its retry policy as validated).
    public var policies: Policies {
        Policies(
            retry: retryPolicy,
            unclaimedTokens: unclaimedTokenPolicy,
            sandbox: sandboxPolicy,
            tokenOwnership: tokenOwnership,
            proratedRefunds: proratedRefunds,
            unknownProducts: unknownProducts
        )
    }

    /// Creates a pipeline whose hook carries out grants and take-backs, with its policies in one value.
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger.
    ///   - hook: The integrator's grant and revoke code.
    ///   - clock: The wall clock for claims, retries and timestamps.
    ///   - policies: Every decision taken by policy.
    ///   - events: Where the pipeline reports what an operator must see.
    public convenience init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some EntitlementStore,
        hook: some FulfillmentHook,
        clock: some WallClock = SystemClock(),
        policies: Policies,
        events: some EventSink = DiscardingEventSink()
    ) {
        self.init(
            verifier: verifier,
            catalog: catalog,
            store: store,
            hook: hook,
            clock: clock,
            retryPolicy: policies.retry,
            unclaimedTokenPolicy: policies.unclaimedTokens,
            sandboxPolicy: policies.sandbox,
            tokenOwnership: policies.tokenOwnership,
            proratedRefunds: policies.proratedRefunds,
            unknownProducts: policies.unknownProducts,
            events: events
        )
    }

    /// Creates a pipeline whose ledger carries out every grant and take-back in the transaction that records it, with
    /// its policies in one value (see
    /// ``init(verifier:catalog:store:clock:retryPolicy:unclaimedTokenPolicy:sandboxPolicy:tokenOwnership:proratedRefunds:unknownProducts:events:)``).
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger, which also grants and takes back.
    ///   - clock: The wall clock for retries and timestamps.
    ///   - policies: Every decision taken by policy.
    ///   - events: Where the pipeline reports what an operator must see.
    public convenience init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some TransactionalFulfillmentStore,
        clock: some WallClock = SystemClock(),
        policies: Policies,
        events: some EventSink = DiscardingEventSink()
    ) {
        self.init(
            verifier: verifier,
            catalog: catalog,
            store: store,
            clock: clock,
            retryPolicy: policies.retry,
            unclaimedTokenPolicy: policies.unclaimedTokens,
            sandboxPolicy: policies.sandbox,
            tokenOwnership: policies.tokenOwnership,
            proratedRefunds: policies.proratedRefunds,
            unknownProducts: policies.unknownProducts,
            events: events
        )
    }
}
