#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCommandLine
import IAPCore

/// A child `iap` process of `iap sandbox`: its standard output read line by line until it says where it listens,
/// its standard error appended to a log file.
final class SandboxProcess: @unchecked Sendable {
    let name: String
    let log: URL
    private let process = Process()
    private let output = Pipe()

    /// Starts `program arguments` with its standard error appended to `log`.
    init(name: String, program: URL, arguments: [String], log: URL) throws {
        self.name = name
        self.log = log
        if !FileManager.default.fileExists(atPath: log.path) {
            try SystemFile.replaceContents(of: log.path, with: [], sync: false)
        }
        let sink = try FileHandle(forWritingTo: log)
        try sink.seekToEnd()
        process.executableURL = program
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = sink
        process.standardInput = FileHandle.nullDevice
        try Subprocess.runUnblockingSignals(process)
        try? sink.close()
    }

    var isRunning: Bool { process.isRunning }

    /// The first `count` lines the process prints, or fewer when it exits or `timeout` passes first.
    func lines(_ count: Int, timeout: Duration = .seconds(60)) -> [String] {
        let collected = LockedLines()
        let done = DispatchSemaphore(value: 0)
        let descriptor = output.fileHandleForReading.fileDescriptor
        let reader = Thread {
            var current: [UInt8] = []
            var byte: UInt8 = 0
            while collected.count < count {
                let got = read(descriptor, &byte, 1)
                if got < 0, errno == EINTR { continue }
                guard got == 1 else { break }
                if byte == UInt8(ascii: "\n") {
                    collected.append(String(decoding: current, as: UTF8.self))
                    current = []
                } else {
                    current.append(byte)
                }
            }
            done.signal()
        }
        reader.start()
        let seconds = Double(timeout.components.seconds)
        _ = done.wait(timeout: .now() + seconds)
        return collected.all
    }

    /// Asks the process to stop (SIGTERM) and waits for it, up to `grace`; then kills it.
    func stop(grace: Duration = .seconds(10)) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline {
            usleep(50_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The last lines of the process's log, for an error message.
    func logTail(_ count: Int = 5) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(count).joined(separator: "\n")
    }

    private final class LockedLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []

        var count: Int { lock.withLock { lines.count } }
        var all: [String] { lock.withLock { lines } }

        func append(_ line: String) {
            lock.withLock { lines.append(line) }
        }
    }
}
