public import IAPCore

extension FileEntitlementStore {
    /// How a ``FileEntitlementStore`` opens, writes and compacts.
    public struct Options: Sendable {
        /// Whether a store is opened to write or only to read.
        public enum Access: Sendable, Hashable {
            /// Creates the directory and the store if missing, takes the lock, repairs what a crash leaves, writes.
            case readWrite
            /// Creates, locks, repairs and writes nothing: a directory without a ledger throws `notFound`, every
            /// write throws `unsupportedOperation`, and ``FileEntitlementStore/recovery`` says what an open would
            /// repair. It may run while another process holds the store, and sees the ledger as it was when opened.
            case readOnly
        }

        /// Whether the store is opened to write (the default) or only to read.
        public var access: Access
        /// Whether a read-write open creates the store (and its directory) when the directory holds none. Default
        /// `true`; with `false` it throws `notFound` and creates nothing. A read-only open never creates.
        public var createIfMissing: Bool
        /// The journal size in bytes past which the store compacts: it writes a snapshot of the whole ledger
        /// and starts a new journal. `nil` never compacts on its own (``FileEntitlementStore/compact()`` still
        /// does). The default is 64 MiB.
        public var compactionThreshold: Int?
        /// Whether every write is flushed to the device (`fsync`) before the call returns. Default `true`.
        ///
        /// > Warning: With `false` a crash of the machine (not of the process) can lose acknowledged writes;
        /// > the ledger's exactly-once guarantee then no longer holds. Turn it off only in tests that must be
        /// > fast.
        public var fsync: Bool
        /// How long the journal writer waits for more writes before it flushes a batch. Default zero: writes
        /// that arrive while a flush is in flight already share the next one (group commit), so a window only
        /// adds latency unless writers are many and the device is slow.
        public var groupCommitWindow: Duration
        /// The clock that dates the lock file, so that a refused opener can tell how long the holder has run.
        public var clock: any WallClock

        /// Creates options.
        ///
        /// - Parameters:
        ///   - compactionThreshold: Journal bytes that trigger compaction, or `nil` for never.
        ///   - fsync: Whether writes are flushed to the device before they return.
        ///   - groupCommitWindow: How long to gather writes before a flush.
        ///   - clock: The clock that dates the lock file.
        ///   - access: Whether to open the store to write or only to read.
        ///   - createIfMissing: Whether a read-write open creates a store that does not exist.
        public init(
            compactionThreshold: Int? = 64 << 20,
            fsync: Bool = true,
            groupCommitWindow: Duration = .zero,
            clock: any WallClock = SystemClock(),
            access: Access = .readWrite,
            createIfMissing: Bool = true
        ) {
            self.access = access
            self.createIfMissing = createIfMissing
            self.compactionThreshold = compactionThreshold
            self.fsync = fsync
            self.groupCommitWindow = groupCommitWindow
            self.clock = clock
        }
    }
}
