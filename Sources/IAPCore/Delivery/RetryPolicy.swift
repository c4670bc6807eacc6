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
        let initial = Self.seconds(initialDelay)
        let exponent = Double(max(0, attempts - 1))
        let delay = initial * pow(multiplier, exponent)
        return min(delay.isFinite ? delay : .infinity, Self.seconds(maximumDelay))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
