extension Reconciler {
    // MARK: - What a run already asked

    /// The Apple accounts and purchase families that a run's requests already answered for: one history request
    /// answers for every purchase of one Apple account in the app, one status request for every subscription.
    ///
    /// A walk of the whole ledger remembers at most ``Configuration/coverageLimit`` of each kind, the most recent
    /// ones, so that its memory does not grow with the ledger: a family of an account it forgot costs one more
    /// history request, which changes nothing already settled.
    struct Coverage {
        /// Original transaction ids seen in Apple's history answers (or asked for).
        var originals: RecentSet
        /// `appTransactionId`s (one per Apple account and app), with their environment, of the families asked for and
        /// of Apple's answers.
        var accounts: RecentSet
        /// Original transaction ids of the auto-renewable subscriptions seen in history answers.
        var subscriptionOriginals: RecentSet
        /// Original transaction ids a status answer listed (or that were asked for).
        var statusOriginals: RecentSet

        /// An empty coverage remembering at most `limit` of each kind (at least one).
        init(limit: Int = .max) {
            originals = RecentSet(limit: limit)
            accounts = RecentSet(limit: limit)
            subscriptionOriginals = RecentSet(limit: limit)
            statusOriginals = RecentSet(limit: limit)
        }

        /// Adds what another coverage holds (one family's visit, once it succeeded).
        mutating func formUnion(_ other: Coverage) {
            originals.formUnion(other.originals)
            accounts.formUnion(other.accounts)
            subscriptionOriginals.formUnion(other.subscriptionOriginals)
            statusOriginals.formUnion(other.statusOriginals)
        }
    }

    /// A set that remembers at most about `limit` strings, the most recently inserted: two generations, the older
    /// dropped whole when the newer fills, so an insert or a lookup stays O(1) and memory stays bounded.
    struct RecentSet {
        private let generationSize: Int
        private var newer: Set<String> = []
        private var older: Set<String> = []

        /// A set remembering at most `limit` strings (at least two).
        init(limit: Int) {
            generationSize = max(1, limit / 2)
        }

        /// Whether the set holds `value`.
        func contains(_ value: String) -> Bool {
            newer.contains(value) || older.contains(value)
        }

        /// Whether the set holds nothing.
        var isEmpty: Bool {
            newer.isEmpty && older.isEmpty
        }

        /// Every value held, in no order.
        var values: [String] {
            Array(newer.union(older))
        }

        /// Adds `value`; when the newer generation is full, the older one is forgotten.
        mutating func insert(_ value: String) {
            guard !newer.contains(value) else { return }
            if newer.count >= generationSize {
                older = newer
                newer = []
            }
            newer.insert(value)
        }

        /// Adds every value of `other`.
        mutating func formUnion(_ other: RecentSet) {
            for value in other.older {
                insert(value)
            }
            for value in other.newer {
                insert(value)
            }
        }
    }
}
