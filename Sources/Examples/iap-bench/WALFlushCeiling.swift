import Foundation
import IAPCommandLine
import IAPCore

/// The disk's WAL-flush rate, the limit of every durable commit: timed here (an 8 KiB write and `fdatasync`, as
/// PostgreSQL flushes its WAL on Linux), and by `pg_test_fsync` where PostgreSQL's tools are installed.
enum WALFlushCeiling {
    /// Where to time flushes: beside the server's data directory when it is on this machine (the same file system
    /// as the WAL), else the temporary directory.
    static func directory(near dataDirectory: String?) -> String {
        if let dataDirectory {
            let parent = URL(filePath: dataDirectory).deletingLastPathComponent().path(percentEncoded: false)
            var data = stat()
            var beside = stat()
            if stat(dataDirectory, &data) == 0, stat(parent, &beside) == 0, data.st_dev == beside.st_dev,
                access(parent, W_OK) == 0
            {
                return parent
            }
        }
        return FileManager.default.temporaryDirectory.path(percentEncoded: false)
    }

    /// Flushes per second: 8 KiB written at the start of a preallocated 16 MiB file, then `fdatasync`, repeated for
    /// `seconds` (a WAL segment is preallocated, so a flush writes data, not the file's size).
    static func fdatasyncRate(in directory: String, seconds: Double) throws -> Double {
        let path = URL(filePath: directory).appending(path: "iap-bench-fsync-\(getpid()).tmp")
            .path(percentEncoded: false)
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw IAPError(.storageFailure, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5A, count: 8_192)
        let written = block.withUnsafeBytes { bytes -> Bool in
            for offset in stride(from: 0, to: 16 << 20, by: block.count)
            where pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset)) != bytes.count {
                return false
            }
            return fsync(descriptor) == 0
        }
        guard written else {
            throw IAPError(.storageFailure, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let began = ContinuousClock.now
        let budget = Duration.milliseconds(Int64(seconds * 1_000))
        var flushes = 0
        while ContinuousClock.now - began < budget {
            let flushed = block.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress, $0.count, 0) == $0.count && fdatasync(descriptor) == 0
            }
            guard flushed else {
                throw IAPError(.storageFailure, "cannot flush \(path): \(String(cString: strerror(errno)))")
            }
            flushes += 1
        }
        return Double(flushes) / (ContinuousClock.now - began).timeInterval
    }

    /// `pg_test_fsync -s 1` in `directory`, when installed: the flushes per second of each sync method for one
    /// 8 KiB write. `nil` when it is not installed or fails.
    static func pgTestFsync(in directory: String) -> [String: Any]? {
        let candidates =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
            .map { "/usr/lib/postgresql/\($0)/bin/pg_test_fsync" }
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        Output.error("WAL flush: \(tool) -s 1 (about 15 s)")
        let file = URL(filePath: directory).appending(path: "iap-bench-pg-test-fsync-\(getpid()).tmp")
        let report = URL(filePath: directory).appending(path: "iap-bench-pg-test-fsync-\(getpid()).txt")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: report)
        }
        guard
            let text = run(
                tool,
                ["-s", "1", "-f", file.path(percentEncoded: false)],
                output: report.path(percentEncoded: false),
                timeout: .seconds(120)
            )
        else {
            return nil
        }
        // The first section: "Compare file sync methods using one 8kB write", one line per method.
        var methods: [String: Double] = [:]
        var inSection = false
        for line in text.split(separator: "\n") {
            if line.contains("using one 8kB write") {
                inSection = true
                continue
            }
            if inSection, line.hasPrefix("Compare") {
                break
            }
            let fields = line.split(separator: " ")
            if inSection, fields.count >= 3, fields[2] == "ops/sec", let rate = Double(fields[1]) {
                methods[String(fields[0])] = rate.rounded()
            }
        }
        return ["tool": tool, "seconds": 1, "flushesPerSecondOneWrite": methods]
    }

    /// Runs a tool with its output in a file, and returns the output; `nil` when it fails or outlives `timeout`.
    ///
    /// Spawned with every signal unblocked and at its default: `pg_test_fsync` times each test with `SIGALRM`, and a
    /// child inherits the signal mask of the thread that starts it (Foundation's `Process` passes on what its
    /// threads block, and the tool would then never stop).
    private static func run(_ tool: String, _ arguments: [String], output: String, timeout: Duration) -> String? {
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        posix_spawnattr_init(&attributes)
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawnattr_destroy(&attributes)
            posix_spawn_file_actions_destroy(&actions)
        }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer {
            for pointer in argv {
                free(pointer)
            }
        }
        var child: pid_t = 0
        guard posix_spawn(&child, tool, &actions, &attributes, argv, environ) == 0 else {
            return nil
        }
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(child, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                kill(child, SIGKILL)
                waitpid(child, &status, 0)
                return nil
            }
            usleep(100_000)
        }
        guard status == 0, let data = FileManager.default.contents(atPath: output) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }
}
