/// How the delivery pipeline retries a failed fulfillment hook.
public struct RetryPolicy: Sendable, Hashable {
    /// The wait after the first failure.
    public var initialDelay: Duration
    /// The factor each further failure multiplies the wait by.
    public var multiplier: Double
    /// The longest wait.
    public var maximumDelay: Duration
    /// Hook calls after which an entry is dead-lettered (kept, visible, never dropped).
    public var maximumAttempts: Int
    /// The spread of each wait, as a fraction: 0.2 draws it from 80 % to 120 % of the nominal wait.
    public var jitter: Double
    /// How long a deliverer holds an entry while its hook runs; if the process dies, the entry is
    /// picked up again after this.
    public var claimDuration: Duration

    /// Creates a policy.
    public init(
        initialDelay: Duration = .seconds(30),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(6 * 3_600),
        maximumAttempts: Int = 12,
        jitter: Double = 0.2,
        claimDuration: Duration = .seconds(120)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
        self.jitter = jitter
        self.claimDuration = claimDuration
    }

    /// The policy with every value brought into range: delays and the claim at least zero, the multiplier at
    /// least 1, at least one attempt, the jitter between 0 and 1.
    public func validated() -> RetryPolicy {
        var policy = self
        policy.initialDelay = max(.zero, initialDelay)
        // Capped so that every retry time stays far inside what the ledger stores (a year out at most).
        let year = Duration.seconds(365 * 86_400)
        policy.initialDelay = min(policy.initialDelay, year)
        policy.maximumDelay = min(max(policy.initialDelay, maximumDelay), year)
        policy.multiplier = multiplier.isFinite ? max(1, multiplier) : 2
        policy.maximumAttempts = max(1, maximumAttempts)
        policy.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0
        policy.claimDuration = min(max(.zero, claimDuration), .seconds(86_400))
        return policy
    }

    /// The nominal wait, in seconds, after `attempts` failed calls (1 for the first failure).
    public func nominalDelay(afterAttempts attempts: Int) -> Double {
        let initial = initialDelay.timeInterval
        let exponent = Double(max(0, attempts - 1))
        let delay = initial * pow(multiplier, exponent)
        return min(delay.isFinite ? delay : .infinity, maximumDelay.timeInterval)
    }

    /// The wait after `attempts` failed calls, with the jitter drawn: from `nominal × (1 − jitter)` to
    /// `nominal × (1 + jitter)`, and never more than ``maximumDelay``.
    ///
    /// Every backoff in the package is computed here: the pipeline's hook retries, the purchase coordinator's
    /// resubmissions and the App Store Server API client's retries.
    ///
    /// - Parameters:
    ///   - attempts: Failed calls so far, 1 for the first failure.
    ///   - draw: A number from 0 to 1 that picks the point in the spread; random unless a test fixes it.
    /// - Returns: The wait, in seconds.
    public func delay(afterAttempts attempts: Int, draw: Double = .random(in: 0...1)) -> Double {
        let nominal = nominalDelay(afterAttempts: attempts)
        let spread = jitter.isFinite ? min(1, max(0, jitter)) : 0
        guard spread > 0, nominal.isFinite else { return nominal }
        let lowest = nominal * (1 - spread)
        let highest = min(nominal * (1 + spread), maximumDelay.timeInterval)
        return lowest + (highest - lowest) * min(1, max(0, draw))
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
