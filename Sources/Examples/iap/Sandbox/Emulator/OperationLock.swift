/// Runs the emulator's state changes one at a time, first come first served.
///
/// An actor alone does not serialise work that suspends: while one change awaits the store, another could start.
/// The lock keeps a change, its journal entry and its notifications together, so that a replayed journal makes the
/// same transactions in the same order.
actor OperationLock {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once every earlier caller has finished.
    ///
    /// - Parameter body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    func run<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
