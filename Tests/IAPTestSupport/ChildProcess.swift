package import Foundation
import IAPCore
package import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process of a test (a server under test, or a command run to completion), started with `posix_spawn` and
/// waited for with `waitpid`, every wait bounded.
///
/// Foundation's `Process` is not used in the tests: on Linux it learns that a child ended through a socket the child
/// inherits, and its pipes are not close-on-exec, so a child spawned at the same moment by a parallel test can inherit
/// another test's socket or pipe ends. The first child's exit, or the end of its output, is then not seen before
/// the other child ends — and a long-lived server ends only when its own test is done: a `readDataToEndOfFile()` or
/// `waitUntilExit()` that waits for ever. A `ChildProcess` inherits nothing but its standard streams (every other
/// descriptor is closed in the child), its own descriptors are close-on-exec, and every wait (``wait(timeout:)``,
/// ``exit(within:)``, ``stop(gracePeriod:sourceLocation:)``, ``run(_:_:input:environment:directory:timeout:)``) gives
/// up after a deadline, says what it waited for, and kills.
package final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    package enum Input: Sendable {
        /// `/dev/null`.
        case null
        /// A file.
        case file(URL)
        /// A pipe whose write end is ``ChildProcess/standardInput``.
        case pipe
    }

    /// Where the child's standard output goes.
    package enum Output: Sendable {
        /// A pipe whose read end is ``ChildProcess/standardOutput``.
        case pipe
        /// A file (created or truncated); ``ChildProcess/standardOutput`` then reads it from its start.
        case file(URL)
    }

    /// The child's process id.
    package let pid: pid_t
    /// The read end of the child's standard output.
    package let standardOutput: FileHandle
    /// The write end of the child's standard input, for ``Input/pipe``.
    package let standardInput: FileHandle?
    /// Where its standard error goes.
    package let logFile: URL
    /// The command line, for messages.
    package let commandLine: String
    /// The raw `waitpid` status once the child was reaped.
    private let reaped = LockedValue<Int32?>(nil)

    /// Starts `executable` with `arguments`, standard error appended to `logFile`.
    ///
    /// - Parameters:
    ///   - environment: The whole environment; this process's when `nil`.
    ///   - directory: The working directory; this process's when `nil`.
    /// - Throws: `POSIXError` when a descriptor cannot be opened or the spawn fails.
    package init(
        executable: URL,
        arguments: [String],
        logFile: URL,
        environment: [String: String]? = nil,
        directory: URL? = nil,
        input: Input = .null,
        output: Output = .pipe
    ) throws {
        var opened: [Int32] = []
        func cleanUp() {
            for fd in opened {
                close(fd)
            }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        // Standard input.
        var inputWriter: Int32 = -1
        switch input {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .file(let url):
            posix_spawn_file_actions_addopen(&actions, 0, url.path, O_RDONLY, 0)
        case .pipe:
            var fds: [Int32] = [-1, -1]
            guard Self.closeOnExecPipe(&fds) else { throw Self.posixError() }
            opened += [fds[0]]
            inputWriter = fds[1]
            // dup2 clears close-on-exec on the copy.
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        }

        // Standard output.
        let outputReader: Int32
        switch output {
        case .pipe:
            var fds: [Int32] = [-1, -1]
            guard Self.closeOnExecPipe(&fds) else {
                if inputWriter >= 0 { close(inputWriter) }
                cleanUp()
                throw Self.posixError()
            }
            outputReader = fds[0]
            opened += [fds[1]]
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        case .file(let url):
            let writer = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let reader = writer >= 0 ? open(url.path, O_RDONLY | O_CLOEXEC) : -1
            guard writer >= 0, reader >= 0 else {
                if writer >= 0 { close(writer) }
                if inputWriter >= 0 { close(inputWriter) }
                cleanUp()
                throw Self.posixError()
            }
            outputReader = reader
            opened += [writer]
            posix_spawn_file_actions_adddup2(&actions, writer, 1)
        }

        // Standard error.
        let log = open(logFile.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else {
            close(outputReader)
            if inputWriter >= 0 { close(inputWriter) }
            cleanUp()
            throw Self.posixError()
        }
        opened += [log]
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        defer { cleanUp() }

        if let directory, !Self.changeDirectory(to: directory, in: &actions) {
            close(outputReader)
            if inputWriter >= 0 { close(inputWriter) }
            throw POSIXError(.ENOSYS)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A clean signal state: a test runner's thread blocks or ignores signals (SIGTERM among them) that the child
        // must receive. Its own process group, so that a terminal's ^C reaches the test runner only.
        var flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaults, number)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
            // Descriptors opened elsewhere in the test process without close-on-exec (Foundation's own) stay out.
            Self.closeFrom(3, in: &actions)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer {
            for argument in argv {
                free(argument)
            }
        }
        let environmentList = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
        defer {
            for variable in environmentList {
                free(variable)
            }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, &attributes, argv, environmentList)
        guard spawned == 0 else {
            close(outputReader)
            if inputWriter >= 0 { close(inputWriter) }
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
        }
        self.pid = pid
        self.standardOutput = FileHandle(fileDescriptor: outputReader, closeOnDealloc: true)
        self.standardInput = inputWriter >= 0 ? FileHandle(fileDescriptor: inputWriter, closeOnDealloc: true) : nil
        self.logFile = logFile
        self.commandLine = ([executable.lastPathComponent] + arguments).joined(separator: " ")
    }

    /// Whether the child still runs (it is reaped here once it has ended).
    package var isRunning: Bool {
        reap() == nil
    }

    /// The exit code, or the signal number for a child a signal ended; `nil` while it runs.
    package var terminationStatus: Int32? {
        reap().map { status in
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : signal
        }
    }

    /// Whether a signal ended the child.
    package var endedBySignal: Bool {
        reap().map { status in status & 0x7f != 0 } ?? false
    }

    /// Sends the child a signal, while it runs.
    package func signal(_ number: Int32) {
        if isRunning {
            _ = sendSignal(pid, number)
        }
    }

    /// Waits up to `timeout` for the child to end, blocking this thread; `true` when it has.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Waits up to `timeout` for the child to end without holding a thread; `true` when it has.
    package func exit(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Stops the child with SIGTERM and waits for it; when it has not ended after `gracePeriod`, records a test issue
    /// with what it wrote to standard error and its threads' stacks (from `gdb`, where installed), then kills it.
    package func stop(gracePeriod: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) {
        signal(SIGTERM)
        guard !wait(timeout: gracePeriod) else { return }
        Issue.record(
            "\(commandLine) (pid \(pid)) did not end within \(gracePeriod) of SIGTERM; killed.\n\(diagnostics())",
            sourceLocation: sourceLocation
        )
        kill(sourceLocation: sourceLocation)
    }

    /// Kills the child with SIGKILL and waits for it (a test issue when even that takes longer than 30 seconds).
    package func kill(sourceLocation: SourceLocation = #_sourceLocation) {
        signal(SIGKILL)
        if !wait(timeout: .seconds(30)) {
            Issue.record("\(commandLine) (pid \(pid)) still runs 30 s after SIGKILL", sourceLocation: sourceLocation)
        }
    }

    /// The last lines of the child's standard error, and its threads' stacks.
    package func diagnostics() -> String {
        let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        var text = "standard error (last 40 lines):\n" + log.split(separator: "\n").suffix(40).joined(separator: "\n")
        let gdb = URL(filePath: "/usr/bin/gdb")
        if isRunning, FileManager.default.isExecutableFile(atPath: gdb.path) {
            let scratch = FileManager.default.temporaryDirectory.appending(path: "gdb-\(pid)-\(UUID().uuidString)")
            defer {
                try? FileManager.default.removeItem(at: scratch.appendingPathExtension("out"))
                try? FileManager.default.removeItem(at: scratch.appendingPathExtension("log"))
            }
            if let tracer = try? ChildProcess(
                executable: gdb,
                arguments: ["-p", String(pid), "-batch", "-nx", "-ex", "thread apply all bt 30"],
                logFile: scratch.appendingPathExtension("log"),
                output: .file(scratch.appendingPathExtension("out"))
            ) {
                if !tracer.wait(timeout: .seconds(60)) {
                    tracer.kill()
                }
                let trace = (try? Data(contentsOf: scratch.appendingPathExtension("out"))) ?? Data()
                text += "\nthreads:\n" + String(decoding: trace, as: UTF8.self)
            }
        }
        return text
    }

    // MARK: - Commands run to completion

    /// What a command run to completion did.
    package struct Completion: Sendable {
        /// The exit code, or the number of the signal that ended it.
        package let status: Int32
        /// Whether a signal ended it.
        package let endedBySignal: Bool
        /// Its standard output.
        package let standardOutput: Data
        /// Its standard error.
        package let standardError: Data
    }

    /// Runs `executable` to its end with `input` on its standard input, without holding a thread of the concurrency
    /// pool; its output goes to files, so no other process can hold its end open.
    ///
    /// - Parameters:
    ///   - environment: The whole environment; this process's when `nil`.
    ///   - directory: The working directory; this process's when `nil`.
    ///   - timeout: How long it may run; then it is killed and this throws, with its standard error and its stacks.
    /// - Throws: `IAPError` `.internalError` when it cannot be started or runs past `timeout`.
    package static func run(
        _ executable: URL,
        _ arguments: [String],
        input: Data = Data(),
        environment: [String: String]? = nil,
        directory: URL? = nil,
        timeout: Duration = .seconds(180)
    ) async throws -> Completion {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "iap-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inputFile = scratch.appending(path: "stdin")
        let outputFile = scratch.appending(path: "stdout")
        let errorFile = scratch.appending(path: "stderr")
        try input.write(to: inputFile)
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: executable,
                arguments: arguments,
                logFile: errorFile,
                environment: environment,
                directory: directory,
                input: .file(inputFile),
                output: .file(outputFile)
            )
        } catch {
            throw IAPError(.internalError, "cannot start \(executable.path): \(error)")
        }
        guard await child.exit(within: timeout) else {
            let diagnostics = child.diagnostics()
            child.kill()
            throw IAPError(
                .internalError,
                "\(child.commandLine) did not end within \(timeout); killed.\n\(diagnostics)"
            )
        }
        return Completion(
            status: child.terminationStatus ?? -1,
            endedBySignal: child.endedBySignal,
            standardOutput: (try? Data(contentsOf: outputFile)) ?? Data(),
            standardError: (try? Data(contentsOf: errorFile)) ?? Data()
        )
    }

    // MARK: - Internals

    private func reap() -> Int32? {
        reaped.withLock { reaped in
            if let reaped {
                return reaped
            }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(pid, &status, WNOHANG)
            } while result == -1 && errno == EINTR
            if result == pid {
                reaped = status
            }
            return reaped
        }
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    /// `pipe2(_, O_CLOEXEC)`, which Glibc's Swift overlay does not declare, looked up at run time; `pipe` and `fcntl`
    /// where it is missing.
    private static func closeOnExecPipe(_ fds: inout [Int32]) -> Bool {
        #if canImport(Glibc)
            typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
            if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") {
                return unsafeBitCast(symbol, to: Pipe2.self)(&fds, O_CLOEXEC) == 0
            }
        #endif
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29, macOS 10.15), looked up at run time: the overlays do not
    /// declare it.
    private static func changeDirectory(to directory: URL, in actions: inout posix_spawn_file_actions_t) -> Bool {
        typealias AddChdir =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
            -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            return false
        }
        return directory.path.withCString { unsafeBitCast(symbol, to: AddChdir.self)(&actions, $0) } == 0
    }

    #if canImport(Glibc)
        /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which the overlay does not declare either; without
        /// it, a close for every descriptor open now.
        private static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"),
                unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first) == 0
            {
                return
            }
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap(Int32.init) where fd >= first {
                posix_spawn_file_actions_addclose(&actions, fd)
            }
        }
    #endif
}

/// `kill(2)`, out of reach of ``ChildProcess/kill(sourceLocation:)`` by name.
private func sendSignal(_ pid: pid_t, _ number: Int32) -> Int32 {
    kill(pid, number)
}
