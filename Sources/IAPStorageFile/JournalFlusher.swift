#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The thread that does a store's journal I/O: writing and flushing each batch (`write` + `fsync`), cutting the
/// journal back after a failed flush, creating a compaction's new journal.
///
/// A flush blocks for as long as the disk takes to answer its `fsync`. Done on a thread of Swift's concurrency
/// pool (as many threads as cores), it would take one of them away from the callers for all that time: on a
/// 2-core machine, verification would then run on one core while the disk flushes. This thread only waits.
///
/// It is one persistent thread that sleeps on a condition variable between jobs, started at the first job and
/// ended by ``stop()`` (the store's `close()`, or its `deinit`); a job submitted after that starts it again. Jobs
/// run one at a time, in the order they were submitted.
final class JournalFlusher: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: the jobs waiting, whether the thread runs, and whether it is to end once idle.
    private var jobs: [@Sendable () -> Void] = []
    private var isRunning = false
    private var isStopping = false

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        mutex.deinitialize(count: 1)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs blocking I/O on the thread and returns its result.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Lets the thread end once it has run every job submitted so far.
    func stop() {
        pthread_mutex_lock(mutex)
        isStopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Queues a job, starting the thread if it is not running.
    private func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        isStopping = false
        if isRunning {
            pthread_cond_signal(condition)
            pthread_mutex_unlock(mutex)
            return
        }
        isRunning = true
        let started = startThread()
        pthread_mutex_unlock(mutex)
        if !started {
            // No thread could be created (the process ran out of them): the caller's thread runs the jobs, one
            // at a time as always, blocking as the I/O does.
            drain(waiting: false)
        }
    }

    /// Creates the detached thread; `false` if the system refused.
    private func startThread() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        let created = pthread_create(
            &thread,
            nil,
            { context in
                #if canImport(Darwin)
                    let flusher = Unmanaged<JournalFlusher>.fromOpaque(context).takeRetainedValue()
                #else
                    guard let context else { return nil }
                    let flusher = Unmanaged<JournalFlusher>.fromOpaque(context).takeRetainedValue()
                #endif
                flusher.drain(waiting: true)
                return nil
            },
            context
        )
        guard created == 0 else {
            Unmanaged<JournalFlusher>.fromOpaque(context).release()
            return false
        }
        #if canImport(Darwin)
            if let thread {
                pthread_detach(thread)
            }
        #else
            pthread_detach(thread)
        #endif
        return true
    }

    /// Runs jobs in order until there are none; `waiting`, the thread's loop, sleeps for more until stopped.
    private func drain(waiting: Bool) {
        pthread_mutex_lock(mutex)
        while true {
            while waiting, jobs.isEmpty, !isStopping {
                pthread_cond_wait(condition, mutex)
            }
            if jobs.isEmpty {
                isRunning = false
                pthread_mutex_unlock(mutex)
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(mutex)
            for job in batch {
                job()
            }
            pthread_mutex_lock(mutex)
        }
    }
}
