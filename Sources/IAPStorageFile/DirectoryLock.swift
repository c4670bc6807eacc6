#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// The advisory lock that keeps a store directory to one writer at a time.
///
/// `flock(LOCK_EX | LOCK_NB)` on `DIR/LOCK`. The lock belongs to the open file description, so it holds
/// against other processes and against a second open of the same directory in this process alike, and
/// the kernel drops it when the holder exits, however it exits. The holder writes who it is into the file
/// (`{"pid":…,"host":"…","since":…}`) so that a refused opener can say who holds it.
final class DirectoryLock: Sendable {
    /// The open lock file; closing it releases the lock.
    private let file: SystemFile

    /// Who holds a lock, as written into the lock file.
    struct Holder: Codable, Sendable {
        var pid: Int32
        var host: String
        var since: Date
    }

    /// Takes the lock of `directory`.
    ///
    /// - Throws: ``IAPError`` with code `storageLocked` naming the holder if another open store holds it,
    ///   or `storageFailure` if the lock file cannot be opened or written.
    init(directory: String, clock: any WallClock) throws {
        let path = directory + "/LOCK"
        let file = try SystemFile.open(path, flags: O_RDWR | O_CREAT)
        guard try file.tryExclusiveLock() else {
            throw IAPError(.storageLocked, "the store \(directory) is locked: \(Self.describeHolder(of: file))")
        }
        let holder = Holder(pid: getpid(), host: Self.hostName(), since: clock.now)
        do {
            let bytes = Array(try AppStoreJSON.makeEncoder().encode(holder)) + [UInt8(ascii: "\n")]
            try file.truncate(to: 0)
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = pwrite(
                        file.descriptor,
                        raw.baseAddress.map { $0 + offset },
                        raw.count - offset,
                        off_t(offset)
                    )
                    guard written > 0 else {
                        throw SystemFile.failure("write", path)
                    }
                    offset += written
                }
            }
        } catch let error as IAPError {
            throw error
        } catch {
            throw IAPError(.storageFailure, "cannot write the lock file \(path)", underlying: error)
        }
        self.file = file
    }

    /// Releases the lock. Releasing twice does nothing.
    func release() {
        file.close()
    }

    /// "held by pid 1234 on host … since …", from the lock file's contents.
    private static func describeHolder(of file: SystemFile) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            return "held by another process that has not written its name yet"
        }
        let bytes = Data(buffer[0..<count])
        guard let holder = try? AppStoreJSON.makeDecoder().decode(Holder.self, from: bytes) else {
            return "held by another process (the lock file says: \(String(decoding: bytes, as: UTF8.self)))"
        }
        return "held by pid \(holder.pid) on host \(holder.host) since \(holder.since) "
            + "(milliseconds \(holder.since.millisecondsSince1970)); close that store first"
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else {
            return "unknown"
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
