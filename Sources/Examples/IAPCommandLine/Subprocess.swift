#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
public import Foundation

/// Starting child processes from the command-line tools.
public enum Subprocess {
    /// Starts a process with no signal blocked in it.
    ///
    /// A child inherits the signal mask of the thread that spawns it, and the threads Swift concurrency runs on
    /// block every signal: a child that waits for `SIGALRM`, `SIGTERM` or `SIGINT` would never get it.
    public static func runUnblockingSignals(_ process: Process) throws {
        var none = sigset_t()
        var previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }

    /// This program's own executable, or `nil` when it cannot be found.
    public static func ownExecutable() -> URL? {
        #if os(Linux)
            let path = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
            if FileManager.default.isExecutableFile(atPath: path.path) {
                return path
            }
        #endif
        if let url = Bundle.main.executableURL, FileManager.default.isExecutableFile(atPath: url.path) {
            return url
        }
        return nil
    }
}
