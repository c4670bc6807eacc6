#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCommandLine
import IAPCore

/// The child processes the benchmarks run and time: the `iap` tool beside `iap-bench`, this executable again, and
/// other programs (`openssl`, Python); what they printed, and the CPU time they took.
enum ChildProcess {
    struct Spawned {
        var status: Int32
        /// Output lines.
        var lines = 0
        /// Output lines that start with `{"ok":true`.
        var okLines = 0
        /// The output, when asked to keep it.
        var output: [UInt8] = []
    }

    /// Runs a program with `input` written to its standard input from another thread while its output is read
    /// (and counted line by line), so that neither pipe stalls the other.
    static func spawn(_ program: URL, _ arguments: [String], input: [UInt8]?, keepOutput: Bool = true) throws
        -> Spawned
    {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try runUnblockingSignals(process)
        if let input {
            let writer = Thread {
                let handle = stdin.fileHandleForWriting
                input.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count, let base = bytes.baseAddress {
                        let written = write(handle.fileDescriptor, base + offset, bytes.count - offset)
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else { break }
                        offset += written
                    }
                }
                try? handle.close()
            }
            writer.start()
        }
        var result = Spawned(status: 0)
        var counter = LineCounter()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let descriptor = stdout.fileHandleForReading.fileDescriptor
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if keepOutput {
                result.output.append(contentsOf: chunk[0..<count])
            }
            counter.count(chunk[0..<count])
        }
        process.waitUntilExit()
        result.status = process.terminationStatus
        result.lines = counter.lines
        result.okLines = counter.okLines
        return result
    }

    /// Runs a program as a batch job: its standard input read from `input`, its standard output written to
    /// `output` (created private), nothing piped through this process. Returns its exit status.
    static func spawn(_ program: URL, _ arguments: [String], from input: URL, to output: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let source = try FileHandle(forReadingFrom: input)
        defer { try? source.close() }
        try SystemFile.replaceContents(of: output.path(percentEncoded: false), with: [], sync: false)
        let sink = try FileHandle(forWritingTo: output)
        defer { try? sink.close() }
        process.standardInput = source
        process.standardOutput = sink
        process.standardError = FileHandle.nullDevice
        try runUnblockingSignals(process)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Counts output lines, and those that start with `{"ok":true`, across the chunks they arrive in.
    struct LineCounter {
        private(set) var lines = 0
        private(set) var okLines = 0
        /// How much of `{"ok":true` the current line has matched, and whether it already differs.
        private var matched = 0
        private var differs = false
        private static let okPrefix = Array(#"{"ok":true"#.utf8)

        mutating func count(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    lines += 1
                    if !differs, matched == Self.okPrefix.count {
                        okLines += 1
                    }
                    matched = 0
                    differs = false
                } else if !differs, matched < Self.okPrefix.count {
                    if byte == Self.okPrefix[matched] {
                        matched += 1
                    } else {
                        differs = true
                    }
                }
            }
        }
    }

    /// The CPU time of the children waited for so far, in seconds.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        #else
            getrusage(RUSAGE_CHILDREN, &usage)
        #endif
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU time of the calling thread, in seconds.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// Starts a process with no signal blocked in it (`openssl speed` stops each measurement with `SIGALRM`).
    static func runUnblockingSignals(_ process: Process) throws {
        try Subprocess.runUnblockingSignals(process)
    }

    /// This program's own executable (`iap-bench`), to run a part of a benchmark in a process of its own.
    static func ownExecutable() throws -> URL {
        guard let url = Subprocess.ownExecutable() else {
            throw IAPError(.internalError, "cannot find the iap-bench executable to run")
        }
        return url
    }

    /// The `iap` executable of the same build, beside `iap-bench` (`.build/release/iap`), to run `iap verify
    /// --batch` and `iap ledger ingest` exactly as a user would.
    ///
    /// - Throws: ``IAPError`` with code `invalidConfiguration`, naming where it looked and what to build, when there
    ///   is none.
    static func iap() throws -> URL {
        let own = try ownExecutable()
        let iap = own.deletingLastPathComponent().appending(path: "iap")
        guard FileManager.default.isExecutableFile(atPath: iap.path(percentEncoded: false)) else {
            let release = own.deletingLastPathComponent().lastPathComponent == "debug" ? "" : " -c release"
            throw IAPError(
                .invalidConfiguration,
                "this benchmark runs the iap tool, and there is no iap beside iap-bench "
                    + "(\(iap.path(percentEncoded: false))): build it first, swift build\(release) --product iap"
            )
        }
        return iap
    }

    /// The first executable called `name` on the `PATH`.
    static func findExecutable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(filePath: String(directory)).appending(path: name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        return nil
    }
}
