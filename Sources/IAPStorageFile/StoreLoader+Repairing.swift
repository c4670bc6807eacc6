#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

extension StoreLoader {
    /// Cuts a torn tail, the uncommitted end of the signed file and removes leftovers; opens the journal to append.
    mutating func repair(
        torn: (generation: UInt64, offset: Int, length: Int)?,
        signed: StoreManifest.Signed?,
        leftovers: [String],
        generation: UInt64
    ) throws -> SystemFile {
        if let torn {
            let file = try SystemFile.open(files.journal(torn.generation), flags: O_WRONLY)
            try file.truncate(to: torn.offset)
            if fsync {
                try file.sync()
            }
        }
        if recovery.cutSignedBytes > 0, let expected = signed {
            let file = try SystemFile.open(files.signed(expected.generation), flags: O_WRONLY)
            try file.truncate(to: expected.bytes)
            if fsync {
                try file.sync()
            }
        }
        for name in leftovers {
            try SystemFile.remove(files.path(name))
        }
        let path = files.journal(generation)
        let journal: SystemFile
        if SystemFile.exists(path) {
            journal = try SystemFile.open(path, flags: O_WRONLY | O_APPEND)
        } else {
            journal = try Self.createJournal(generation, files: files, sync: fsync)
        }
        if fsync, torn != nil || !leftovers.isEmpty {
            try SystemFile.syncDirectory(files.directory)
        }
        return journal
    }
}
