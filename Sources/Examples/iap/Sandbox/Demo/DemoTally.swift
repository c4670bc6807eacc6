import IAPCore

/// What the server answered during one run of the demo's story, counted by kind: what a replay against the
/// ledger of an earlier run reports instead of the story.
final class DemoTally: Sendable {
    private let counts = LockedValue<[String: Int]>([:])

    /// Counts one answer of the delivery pipeline.
    func count(_ outcome: DeliveryOutcome) {
        count(outcome.name)
    }

    /// Counts one answer by its kind.
    func count(_ kind: String) {
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    /// How many answers of each kind.
    var counted: [String: Int] {
        counts.withLock { $0 }
    }
}
