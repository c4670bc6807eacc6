#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

extension StoreLoader {
    /// A new, empty store: `journal-1.jsonl` with its header line, and the manifest that lists it.
    mutating func create() throws -> Loaded {
        let journal = try Self.createJournal(1, files: files, sync: fsync)
        let bytes = try journal.size()
        let manifest = StoreManifest(snapshot: nil, journals: [.init(generation: 1, bytes: bytes, lsn: 0)], signed: nil)
        try manifest.write(to: files, sync: fsync)
        return Loaded(
            state: state,
            signed: [],
            lsn: 0,
            generation: 1,
            journal: journal,
            journalBytes: bytes,
            manifest: manifest,
            recovery: recovery,
            findings: [],
            references: [],
            journalHeaders: [:]
        )
    }

    /// Creates `journal-<generation>.jsonl` holding its header line, flushed with its directory entry, and returns
    /// it opened for appending.
    static func createJournal(_ generation: UInt64, files: StoreFiles, sync: Bool) throws -> SystemFile {
        let file = try SystemFile.open(files.journal(generation), flags: O_WRONLY | O_CREAT | O_APPEND | O_TRUNC)
        try file.write(
            try JournalRecord.line(.journal(.init(generation: generation)), seq: 0, encoder: RecordEncoder())
        )
        if sync {
            try file.sync()
            try SystemFile.syncDirectory(files.directory)
        }
        return file
    }
}
