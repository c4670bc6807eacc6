#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The anti-lost-order core: verifies a purchase, records it exactly once, grants it through the
/// integrator's hook, and retries until the grant is confirmed.
///
/// For each signed transaction the pipeline:
/// 1. verifies it (signature, chain, bundle id, environment — whatever the ``Verifier`` checks);
/// 2. looks the product up in the ``ProductCatalog`` (a purchase of a product it does not know is recorded and
///    parked, ``DeliveryState/unknownProduct``, never guessed, and granted once the catalog names it);
/// 3. resolves the owner: an appAccountToken is bound to the first user who presents it, for good (or, with a
///    ``TokenOwnershipCheck``, only to a user it was derived from), and a transaction whose token or id belongs to
///    another user is rejected (stolen-receipt replay);
/// 4. records it in the ``EntitlementStore``, idempotently by transaction id;
/// 5. claims it (compare-and-set, so only one deliverer at a time, across processes) and calls the
///    ``FulfillmentHook`` with an idempotency key;
/// 6. marks it delivered — or, when the hook fails, schedules a retry with exponential backoff and
///    jitter, and after ``RetryPolicy/maximumAttempts`` dead-letters it.
///
/// Every road a verified transaction takes — the app's submission, a notification, a reconciliation, the support
/// tool — ends in ``deliver(_:signedTransaction:userId:orderId:)``, so all of them may carry the same purchase at the
/// same time and the hook still runs once. Each passes the signed JWS it verified, which the ledger keeps beside the
/// entry (``EntitlementStore/signedTransaction(transactionId:)``) so that it can be verified again.
///
/// A crash anywhere leaves the entry recorded: an unclaimed or expired claim is picked up by the next
/// ``drainDueRetries(limit:)``. A revocation (a refund, or family sharing ended) calls the revoke hook
/// once; a reversed refund grants again under a new idempotency key. Newer signed data wins: an old
/// copy of a transaction can never undo a refund.
public final class DeliveryPipeline: Sendable {
    /// Who owns a transaction that carries an appAccountToken no user has claimed, when no user is given
    /// (the App Store's notification arrived before the app's submission).
    public enum UnclaimedTokenPolicy: Sendable, Hashable {
        /// Record it as ``DeliveryState/awaitingOwner`` and grant nothing until a user presents it.
        case awaitOwner
        /// The token itself is the user (for ledgers whose users are their appAccountTokens).
        case tokenIsUser
    }

    /// Who carries out grants and take-backs: the integrator's hook, called between the claim and the mark; or the
    /// ledger itself, in the transaction that writes the entry.
    enum Fulfillment: Sendable {
        case hook(any FulfillmentHook)
        case transactional(any TransactionalFulfillmentStore)
    }

    /// Verifies what is submitted; the engines built on the pipeline (``NotificationProcessor``, reconciliation, the
    /// order lookup) verify with it too.
    public let verifier: any Verifier
    /// What each product is.
    public let catalog: any ProductCatalog
    /// The ledger.
    public let store: any EntitlementStore
    let fulfillment: Fulfillment
    /// The clock of claims, expiry decisions and events.
    public let clock: any WallClock
    /// Where each delivery is reported; the engines built on the pipeline report there too.
    public let events: any EventSink
    /// The retry policy.
    public let retryPolicy: RetryPolicy
    /// Who owns a transaction whose appAccountToken no user has claimed.
    public let unclaimedTokenPolicy: UnclaimedTokenPolicy
    /// What sandbox purchases get on a production server.
    public let sandboxPolicy: SandboxPolicy
    /// Whether an unclaimed appAccountToken may go to the user who claims it; `nil` lets the first claimant have it.
    public let tokenOwnership: TokenOwnershipCheck?
    /// Whether the verifier accepts Production data (or does not say): the ``sandboxPolicy`` applies. With several
    /// apps (an ``AppRoutingVerifier``), whether one of them does; each purchase meets the policy by its own app's
    /// environments.
    public let isProductionServer: Bool
    /// What a prorated refund of a non-consumable or a subscription does; a consumable's always takes back its share.
    public let proratedRefunds: ProratedRefundPolicy
    /// What a purchase of a product the catalog does not know gets: parked by default.
    public let unknownProducts: UnknownProductPolicy

    /// Creates a pipeline.
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions; its ``Verifier/acceptedEnvironments`` tell whether this is a
    ///     production server.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger.
    ///   - hook: The integrator's grant and revoke code.
    ///   - clock: The wall clock for claims, retries and timestamps.
    ///   - retryPolicy: How failed hooks are retried.
    ///   - unclaimedTokenPolicy: Who owns a transaction whose appAccountToken no user has claimed.
    ///   - sandboxPolicy: What sandbox purchases get on a production server; ``SandboxPolicy/grant`` by default,
    ///     which App Review needs.
    ///   - tokenOwnership: Refuses an unclaimed appAccountToken to a user it cannot belong to (for apps that derive
    ///     their tokens from the user: ``TokenOwnershipCheck/derived(namespace:)``).
    ///   - proratedRefunds: What a prorated refund of a non-consumable or a subscription does: by default
    ///     (``ProratedRefundPolicy/keepAccess``) the hook is told of the refunded share and takes nothing back.
    ///   - unknownProducts: What a purchase of a product the catalog does not know gets: by default
    ///     (``UnknownProductPolicy/park``) it is recorded and parked until the catalog names it.
    ///   - events: Where the pipeline reports what an operator must see (flagged and refused sandbox purchases); the
    ///     ``TransactionSubmissionHandler`` reports there too.
    public convenience init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some EntitlementStore,
        hook: some FulfillmentHook,
        clock: some WallClock = SystemClock(),
        retryPolicy: RetryPolicy = RetryPolicy(),
        unclaimedTokenPolicy: UnclaimedTokenPolicy = .awaitOwner,
        sandboxPolicy: SandboxPolicy = .grant,
        tokenOwnership: TokenOwnershipCheck? = nil,
        proratedRefunds: ProratedRefundPolicy = .keepAccess,
        unknownProducts: UnknownProductPolicy = .park,
        events: some EventSink = DiscardingEventSink()
    ) {
        self.init(
            verifier: verifier,
            catalog: catalog,
            store: store,
            fulfillment: .hook(hook),
            clock: clock,
            retryPolicy: retryPolicy,
            unclaimedTokenPolicy: unclaimedTokenPolicy,
            sandboxPolicy: sandboxPolicy,
            tokenOwnership: tokenOwnership,
            proratedRefunds: proratedRefunds,
            unknownProducts: unknownProducts,
            events: events
        )
    }

    /// Creates a pipeline whose ledger carries out every grant and take-back in the transaction that records it
    /// (transactional fulfillment, for a wallet kept in the ledger's database).
    ///
    /// A new purchase is recorded, granted and marked delivered in one commit; a due entry is granted and marked
    /// in one compare-and-set commit. No claim is taken and no idempotency key is needed on the wallet's side:
    /// the database admits one of any number of concurrent deliverers, and a crash leaves either both the grant
    /// and the mark or neither. A fulfillment that fails is rolled back, and the attempt is recorded for a retry
    /// with backoff, as with a hook.
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger, which also grants and takes back (`PostgresTransactionalFulfillmentStore`).
    ///   - clock: The wall clock for retries and timestamps.
    ///   - retryPolicy: How failed fulfillments are retried; its claim duration applies only to entries another,
    ///     hook-based, deliverer claimed.
    ///   - unclaimedTokenPolicy: Who owns a transaction whose appAccountToken no user has claimed.
    ///   - sandboxPolicy: What sandbox purchases get on a production server.
    ///   - tokenOwnership: Refuses an unclaimed appAccountToken to a user it cannot belong to.
    ///   - proratedRefunds: What a prorated refund of a non-consumable or a subscription does.
    ///   - unknownProducts: What a purchase of a product the catalog does not know gets.
    ///   - events: Where the pipeline reports what an operator must see.
    public convenience init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some TransactionalFulfillmentStore,
        clock: some WallClock = SystemClock(),
        retryPolicy: RetryPolicy = RetryPolicy(),
        unclaimedTokenPolicy: UnclaimedTokenPolicy = .awaitOwner,
        sandboxPolicy: SandboxPolicy = .grant,
        tokenOwnership: TokenOwnershipCheck? = nil,
        proratedRefunds: ProratedRefundPolicy = .keepAccess,
        unknownProducts: UnknownProductPolicy = .park,
        events: some EventSink = DiscardingEventSink()
    ) {
        self.init(
            verifier: verifier,
            catalog: catalog,
            store: store,
            fulfillment: .transactional(store),
            clock: clock,
            retryPolicy: retryPolicy,
            unclaimedTokenPolicy: unclaimedTokenPolicy,
            sandboxPolicy: sandboxPolicy,
            tokenOwnership: tokenOwnership,
            proratedRefunds: proratedRefunds,
            unknownProducts: unknownProducts,
            events: events
        )
    }

    private init(
        verifier: any Verifier,
        catalog: any ProductCatalog,
        store: any EntitlementStore,
        fulfillment: Fulfillment,
        clock: any WallClock,
        retryPolicy: RetryPolicy,
        unclaimedTokenPolicy: UnclaimedTokenPolicy,
        sandboxPolicy: SandboxPolicy,
        tokenOwnership: TokenOwnershipCheck?,
        proratedRefunds: ProratedRefundPolicy,
        unknownProducts: UnknownProductPolicy,
        events: any EventSink
    ) {
        self.verifier = verifier
        self.catalog = catalog
        self.store = store
        self.fulfillment = fulfillment
        self.clock = clock
        self.events = events
        self.retryPolicy = retryPolicy.validated()
        self.unclaimedTokenPolicy = unclaimedTokenPolicy
        self.sandboxPolicy = sandboxPolicy
        self.tokenOwnership = tokenOwnership
        self.proratedRefunds = proratedRefunds
        self.unknownProducts = unknownProducts
        self.isProductionServer = verifier.acceptedEnvironments.map { $0.contains(.production) } ?? true
    }

    // MARK: - Delivering

    /// Verifies a signed transaction, then delivers it with its JWS (``deliver(_:signedTransaction:userId:orderId:)``).
    ///
    /// - Parameters:
    ///   - signedTransaction: The JWS from StoreKit (`jwsRepresentation`) or the App Store Server API.
    ///   - userId: The business user the app says made the purchase, or `nil` to use the user bound to
    ///     the transaction's appAccountToken, else the owner of the purchase it continues (same
    ///     original transaction), else to wait for its owner.
    ///   - orderId: The business order id, if any.
    /// - Returns: What happened; finish the StoreKit transaction only if
    ///   ``DeliveryOutcome/shouldFinishTransaction``.
    public func submit(signedTransaction: String, userId: String?, orderId: String? = nil) async -> DeliveryOutcome {
        let transaction: TransactionPayload
        do {
            transaction = try await verifier.verifyTransaction(signedTransaction)
        } catch let error as IAPError {
            return .rejected(error)
        } catch {
            // Not a verdict on the data (a custom verifier's network failure, a cancellation): try again later.
            return .rejected(IAPError(.internalError, "verification did not finish: \(error)", isRetryable: true))
        }
        return await deliver(transaction, signedTransaction: signedTransaction, userId: userId, orderId: orderId)
    }

    /// Delivers a verified transaction, wherever it came from (the app, a notification, a reconciliation, the
    /// support tool): applies what the ledger knows of it, else records and grants it.
    ///
    /// The one rule:
    /// - The ledger holds the transaction for a user and no user is named: the newer signed data is applied (a
    ///   refund taken back once, a reversal granted again, a new expiry recorded), and whatever the entry still
    ///   needs from the hook is done.
    /// - Otherwise (a new transaction, a user is named, or the entry waits for its owner): the owner is resolved
    ///   and checked — a named user must not contradict the token's binding, the ``tokenOwnership`` check, the
    ///   purchase it continues or the ledger's owner — then the transaction is recorded once, or the entry waiting
    ///   for its owner is given to them, the token bound, newer data applied, and the grant made.
    ///
    /// A new transaction from a test environment on a production server first meets the ``sandboxPolicy``.
    ///
    /// The environment is part of a purchase's identity: signed data of one environment (`Sandbox`) never changes,
    /// revokes or relabels an entry of another (`Production`) with the same transaction id — the App Store does not
    /// promise that their ids never meet, and test stores make them meet. It is refused with `environmentMismatch`
    /// and the event `delivery.environmentConflict`, and the entry is left as it was.
    ///
    /// - Parameters:
    ///   - transaction: The verified transaction.
    ///   - signedTransaction: The compact JWS `transaction` was verified from (the app's `jwsRepresentation`, a
    ///     notification's `signedTransactionInfo`, a signed transaction from the App Store Server API), kept with a
    ///     new entry, and in place of the older one when the entry takes this newer data; `nil` when the caller has
    ///     none (the entry is then not re-verifiable, see `iap ledger check --reverify`). It must be the JWS of
    ///     `transaction`: the pipeline does not verify it again.
    ///   - userId: The business user who presents it (the authenticated user of a submission), or `nil` to resolve
    ///     it from the ledger, the appAccountToken binding, or the purchase it continues. An empty id or one in the
    ///     pipeline's own namespace (``unownedPrefix``) is rejected with `invalidArgument`.
    ///   - orderId: The business order id, if any; recorded with a new transaction.
    /// - Returns: What happened.
    public func deliver(
        _ transaction: TransactionPayload,
        signedTransaction: String? = nil,
        userId: String?,
        orderId: String? = nil
    ) async -> DeliveryOutcome {
        do {
            if let userId {
                try Self.validate(userId: userId)
            }
            guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
                throw IAPError(.malformedSignedData, "the transaction has no transactionId")
            }
            let known = try await store.entry(transactionId: transactionId)
            if let known {
                try checkEnvironment(of: transaction, against: known)
            }
            if let known, userId == nil, !Self.isPlaceholder(known) {
                return try await settle(
                    try await reconcile(known, with: transaction, signedTransaction: signedTransaction)
                )
            }
            if known == nil {
                try admit(transaction, transactionId: transactionId)
            }
            return try await record(
                transaction,
                signedTransaction: signedTransaction,
                transactionId: transactionId,
                userId: userId,
                orderId: orderId
            )
        } catch {
            return .rejected(Self.classify(error))
        }
    }

    /// Applies newer signed data (a revocation, a reversed refund, a new expiry) to a transaction the ledger holds,
    /// and does what the entry then needs; records nothing new.
    ///
    /// ``deliver(_:signedTransaction:userId:orderId:)`` does this, and more: use it unless you must not record
    /// anything.
    ///
    /// - Parameters:
    ///   - transaction: The verified, newer transaction.
    ///   - signedTransaction: The compact JWS it was verified from, kept in place of the older one if the entry takes
    ///     this data; `nil` when the caller has none.
    /// - Returns: What happened, or `nil` when the ledger has no such transaction.
    public func apply(_ transaction: TransactionPayload, signedTransaction: String? = nil) async -> DeliveryOutcome? {
        do {
            guard let transactionId = transaction.transactionId,
                let entry = try await store.entry(transactionId: transactionId)
            else {
                return nil
            }
            try checkEnvironment(of: transaction, against: entry)
            return try await settle(
                try await reconcile(entry, with: transaction, signedTransaction: signedTransaction)
            )
        } catch {
            return .rejected(Self.classify(error))
        }
    }

    // MARK: - Draining

    /// What one drain did.
    public struct DrainReport: Sendable, Hashable {
        /// Entries the hook confirmed now.
        public var delivered = 0
        /// Entries whose hook failed again (rescheduled or dead-lettered).
        public var deferred = 0
        /// Entries another deliverer held, or that needed nothing.
        public var skipped = 0
        /// Failures of the store itself.
        public var errors: [IAPError] = []

        /// An empty report: nothing done.
        public init() {}

        /// Counts what settling one entry came to.
        mutating func count(_ outcome: DeliveryOutcome) {
            switch outcome {
            case .delivered, .revoked: delivered += 1
            case .deferred: deferred += 1
            case .alreadyDelivered, .pending, .awaitingOwner, .rejected: skipped += 1
            }
        }
    }

    /// Delivers every entry whose retry is due, and every entry left unclaimed by a crash.
    ///
    /// Safe to call from many tasks and processes at once: each entry is claimed by compare-and-set, so
    /// exactly one caller runs its hook.
    ///
    /// - Parameter limit: The most entries to take in this drain.
    /// - Returns: What was done.
    public func drainDueRetries(limit: Int = 100) async -> DrainReport {
        var report = DrainReport()
        let due: [LedgerEntry]
        do {
            due = try await store.dueDeliveries(at: clock.now, limit: limit)
        } catch {
            report.errors.append(Self.classify(error))
            return report
        }
        for entry in due {
            guard delivers(entry) else {
                report.skipped += 1
                continue
            }
            do {
                report.count(try await settle(entry))
            } catch {
                report.errors.append(Self.classify(error))
            }
        }
        return report
    }

    // MARK: - Unknown products

    /// Delivers the purchases parked because the catalog did not know their product, once it does: run it after the
    /// catalog changed (`iap serve` runs it at start and on `SIGHUP`).
    ///
    /// Each parked entry whose product the catalog now names is unparked and claimed in one compare-and-set, then
    /// settled (granted through the hook, or settled without a call when it was refunded meanwhile), so that a drain
    /// running meanwhile never takes it first; the others stay parked.
    ///
    /// - Parameter limit: The most parked entries to look at.
    /// - Returns: What was done: `delivered` granted now, `skipped` still unknown (or settled by another deliverer),
    ///   `deferred` whose grant failed and is in the retry queue.
    public func releaseParked(limit: Int = 10_000) async -> DrainReport {
        var report = DrainReport()
        let parked: [LedgerEntry]
        do {
            parked = try await store.parkedEntries(limit: max(1, limit))
        } catch {
            report.errors.append(Self.classify(error))
            return report
        }
        for entry in parked where delivers(entry) {
            do {
                guard try await knownProduct(of: entry.transaction, id: entry.productId) != nil else {
                    report.skipped += 1
                    continue
                }
                report.count(try await settle(entry, releasingParked: true))
            } catch {
                report.errors.append(Self.classify(error))
            }
        }
        return report
    }

    /// Whether a drain of this pipeline delivers an entry: one of the apps its verifier accepts
    /// (``Verifier/bundleIds``), or any when it does not say. On a ledger shared by several apps, another app's entry is
    /// left to a deliverer of that app, whose catalog says what the purchase is.
    func delivers(_ entry: LedgerEntry) -> Bool {
        guard let apps = verifier.bundleIds, let bundleId = entry.transaction.bundleId else { return true }
        return apps.contains(bundleId)
    }

    /// A parked entry put back on its way: pending, unclaimed, with its attempts reset. ``settle(_:releasingParked:)``
    /// claims it in the same write.
    static func unparked(_ parked: LedgerEntry) -> LedgerEntry {
        var next = parked
        next.deliveryState = .pending
        next.nextAttemptAt = nil
        next.deliveryAttempts = 0
        next.lastError = nil
        return next
    }

    /// The catalog's product, or `nil` when the catalog does not know it; any other failure of the catalog throws.
    ///
    /// Under ``UnknownProductPolicy/signedType`` a product the catalog does not know is the one the signed
    /// transaction describes.
    func knownProduct(of transaction: TransactionPayload, id productId: String) async throws -> CatalogProduct? {
        do {
            return try await catalog.product(id: productId, bundleId: transaction.bundleId)
        } catch let error as IAPError where error.code == .unknownProduct {
            guard unknownProducts == .signedType else { return nil }
            return UnknownProductPolicy.product(describedBy: transaction)
        }
    }

    /// Why a parked entry waits.
    static func parkedError(_ entry: LedgerEntry) -> IAPError {
        IAPError(
            .unknownProduct,
            "transaction \(entry.transactionId) is recorded, but the catalog does not know its product "
                + "'\(entry.productId)': nothing is granted until the catalog names it",
            isRetryable: true
        )
    }

    /// Records an event about a transaction.
    func report(_ event: String, _ transaction: TransactionPayload, userId: String? = nil, error: IAPError? = nil) {
        events.record(
            IAPEvent(
                time: clock.now,
                event: event,
                userId: userId,
                productId: transaction.productId,
                transactionId: transaction.transactionId,
                originalTransactionId: transaction.originalTransactionId,
                environment: transaction.environment?.rawValue,
                outcome: error == nil ? nil : "rejected",
                errorCode: error?.code.rawValue,
                message: error?.message
            )
        )
    }

    // MARK: - User ids

    /// The owner recorded for a transaction nobody can be named for yet: `unowned:<transactionId>`. User ids in
    /// this namespace are the pipeline's own: none is accepted as input.
    public static let unownedPrefix = "unowned:"

    /// Checks a user id that comes in from outside (an app, an operator, a command line).
    ///
    /// A user id is the integrator's opaque key, compared by its UTF-8 bytes and never normalized (an NFC and an NFD
    /// spelling of one name are two users). What could make one id pass for another where people read it (events,
    /// support answers, webhook bodies, the console) is refused: an id of blanks only, and any control character
    /// (Unicode category Cc), format character (Cf: the zero-width characters U+200B–U+200F, the bidirectional
    /// embeddings and overrides U+202A–U+202E and isolates U+2066–U+2069, U+2060–U+2064, U+FEFF, ...), line separator
    /// (Zl, U+2028) or paragraph separator (Zp, U+2029).
    ///
    /// - Parameter userId: The user id.
    /// - Throws: ``IAPError`` `invalidArgument` when the id is empty, blank, holds such a character, or is in the
    ///   pipeline's own namespace (``unownedPrefix``); the message names the character by its code point.
    public static func validate(userId: String) throws {
        if userId.isEmpty {
            throw IAPError(.invalidArgument, "the user id is empty")
        }
        if userId.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) {
            throw IAPError(.invalidArgument, "the user id is only blanks")
        }
        if let hidden = userId.unicodeScalars.first(where: { Self.isHidden($0) }) {
            let hex = String(hidden.value, radix: 16, uppercase: true)
            let codePoint = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            throw IAPError(
                .invalidArgument,
                "the user id holds \(codePoint), a control, format or separator character, which could make it "
                    + "read as another"
            )
        }
        if userId.hasPrefix(unownedPrefix) {
            throw IAPError(
                .invalidArgument,
                "user ids beginning with '\(unownedPrefix)' are reserved for transactions nobody owns yet"
            )
        }
    }

    /// Whether a scalar is invisible or moves text where people read a user id: Cc, Cf, Zl, Zp.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    // MARK: - Recording

    /// Resolves the owner, records the transaction once (or gives the entry waiting for its owner to them), binds
    /// the token, applies newer data and settles: the road of a transaction the ledger does not know for a user.
    private func record(
        _ transaction: TransactionPayload,
        signedTransaction: String?,
        transactionId: String,
        userId: String?,
        orderId: String?
    ) async throws -> DeliveryOutcome {
        guard let productId = transaction.productId, !productId.isEmpty else {
            throw IAPError(.malformedSignedData, "transaction \(transactionId) has no productId")
        }
        let family = try await checkFamilyEnvironment(of: transaction, transactionId: transactionId)
        // A product the catalog does not know is never granted by guess: the purchase is recorded and parked.
        let product = try await knownProduct(of: transaction, id: productId)
        let claim = try await resolveOwner(of: transaction, transactionId: transactionId, requested: userId)
        var candidate = LedgerEntry(
            transaction: transaction,
            transactionId: transactionId,
            originalTransactionId: transaction.originalTransactionId ?? transactionId,
            userId: claim.owner,
            productId: productId,
            orderId: orderId,
            recordedAt: clock.now
        )
        if claim.awaitingOwner {
            candidate.deliveryState = .awaitingOwner
        }
        if let revoked = transaction.revocationDate {
            candidate.revokedAt = revoked
            candidate.refundAccessKept = decideRefundAccess(of: transaction)
            if !keepsPartOfAGrant(candidate) {
                // Revoked before the ledger ever saw it: record it settled, never granted.
                candidate.deliveryState = .delivered
                candidate.revocationDelivered = true
            }
        }
        if candidate.deliveryState == .pending, product == nil, !claim.awaitingOwner {
            candidate.deliveryState = .unknownProduct
        }
        inheritRescindedConsent(&candidate, family: family)
        // The token is bound below once the ledger agreed the transaction is this user's; until then nothing may be
        // granted, since a binding that loses to another user hands the purchase to them.
        let needsBinding =
            claim.token.map { !claim.awaitingOwner && !claim.owner.isSameUser(as: $0) && !claim.tokenBound } ?? false
        var entry: LedgerEntry
        if !needsBinding, let product, self.pendingAction(candidate) == .grant {
            // The usual purchase: recorded and granted in one go (see `recordAndGrant`).
            let recorded = try await recordAndGrant(candidate, signedTransaction: signedTransaction, product: product) {
                inserted in
                if self.isFlagged(inserted) {
                    self.report("delivery.sandboxFlagged", transaction, userId: claim.owner)
                }
            }
            switch recorded {
            case .settled(let outcome):
                return outcome
            case .existing(let existing):
                try checkEnvironment(of: transaction, against: existing)
                entry = try await adopt(existing, by: claim, transactionId: transactionId)
            }
        } else {
            switch try await store.insert(candidate, signedTransaction: signedTransaction) {
            case .inserted(let inserted):
                entry = inserted
                if isFlagged(inserted) {
                    report("delivery.sandboxFlagged", transaction, userId: claim.awaitingOwner ? nil : claim.owner)
                }
                if inserted.deliveryState == .unknownProduct {
                    report(
                        "delivery.unknownProduct",
                        transaction,
                        userId: claim.owner,
                        error: Self.parkedError(inserted)
                    )
                }
            case .existing(let existing):
                try checkEnvironment(of: transaction, against: existing)
                entry = try await adopt(existing, by: claim, transactionId: transactionId)
            }
        }
        // Bind only once the ledger agreed the transaction is this user's: a rejected claim binds nothing.
        if let token = claim.token, !claim.awaitingOwner, !claim.owner.isSameUser(as: token), !claim.tokenBound {
            if case .conflict(let holder) = try await store.bind(appAccountToken: token, to: claim.owner) {
                // Another user bound the token between our check and our insert: the first binding
                // wins, so the purchase is theirs.
                try await hand(entry, to: holder)
                throw IAPError(
                    .ownershipConflict,
                    "the appAccountToken of transaction \(transactionId) belongs to another user ('\(holder)'), "
                        + "not '\(claim.owner)'"
                )
            }
        }
        entry = try await reconcile(entry, with: transaction, signedTransaction: signedTransaction)
        return try await settle(entry)
    }

    static func classify(_ error: any Error) -> IAPError {
        var wrapped = IAPError.wrapping(error, as: .storageFailure, "the store failed")
        if wrapped.code == .storageFailure || wrapped.code == .storageLocked {
            wrapped.isRetryable = true
        }
        return wrapped
    }
}
