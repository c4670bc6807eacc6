import Foundation
import IAPCore
import IAPCrypto
import IAPTestSupport
import IAPTransportURLSession
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An `iap serve` child process on a loopback port, its secrets in files, for tests.
///
/// Call ``stop()`` (SIGTERM) or ``kill()`` (SIGKILL) in a `defer`: a test must never leave a server running.
final class ServeProcess: Sendable {
    static let userSecret = "user-jwt-secret-for-tests-0123456789"
    static let serviceToken = "service-token-for-tests-0123456789"
    static let grantSecret = "grant-secret-for-tests-0123456789"

    let baseURL: URL
    /// The console's address, from the second line, when it was started with `--console-port`.
    let consoleURL: URL?
    let directory: URL
    private let process: ChildProcess
    private let logFile: URL
    let transport = URLSessionTransport()

    /// Starts `iap serve` with the given options plus the secret files, and waits for its `listening on` line.
    ///
    /// - Parameters:
    ///   - arguments: The options, without `--user-jwt-secret-file` and `--service-token-file` (added here).
    ///   - directory: Where the secret files and the log go.
    init(_ arguments: [String], directory: URL) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let userFile = directory.appending(path: "user-jwt.secret")
        let tokenFile = directory.appending(path: "service.token")
        try Self.writePrivate(Self.userSecret + "\n", to: userFile)
        try Self.writePrivate(Self.serviceToken + "\n", to: tokenFile)
        let logFile = directory.appending(path: "serve-\(UUID().uuidString).log")
        let process = try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: ["serve"] + arguments + [
                "--user-jwt-secret-file", userFile.path, "--service-token-file", tokenFile.path,
            ],
            logFile: logFile
        )
        // With a console, its address is the second line.
        let lines = await EmulatorProcess.lines(
            arguments.contains("--console-port") ? 2 : 1,
            of: process.standardOutput
        )
        guard let line = lines.first, line.hasPrefix("listening on http://"),
            let url = URL(string: String(line.dropFirst(13)))
        else {
            process.stop(gracePeriod: .seconds(10))
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw IAPError(.internalError, "iap serve did not start: \(lines); \(log)")
        }
        self.baseURL = url
        self.consoleURL = lines.dropFirst().first.flatMap {
            $0.hasPrefix("console on http://") ? URL(string: String($0.dropFirst(11))) : nil
        }
        self.directory = directory
        self.process = process
        self.logFile = logFile
    }

    /// ``init(_:directory:)``.
    static func start(_ arguments: [String], directory: URL) async throws -> ServeProcess {
        try await ServeProcess(arguments, directory: directory)
    }

    /// Writes a secret file as the tool requires it: 0600.
    static func writePrivate(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// Writes the grant secret file and returns the GRANT options for a webhook at `url`.
    static func grantOptions(_ url: URL, directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appending(path: "grant.secret")
        try writePrivate(grantSecret + "\n", to: file)
        return ["--grant-url", url.absoluteString, "--grant-secret-file", file.path]
    }

    /// Stops the server with SIGTERM and waits for it (a test issue, and SIGKILL, after a minute).
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        process.stop(sourceLocation: sourceLocation)
    }

    /// Kills the server with SIGKILL and waits for it.
    func kill(sourceLocation: SourceLocation = #_sourceLocation) {
        process.kill(sourceLocation: sourceLocation)
    }

    /// Sends the server a signal (`SIGHUP` reloads its catalog).
    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Waits up to `timeout` for the server to end, without holding a thread; `true` when it has.
    func exit(within timeout: Duration) async -> Bool {
        await process.exit(within: timeout)
    }

    /// The exit status (or the signal number) once ended; `nil` while it runs.
    var terminationStatus: Int32? { process.terminationStatus }

    /// What the server wrote to standard error (its events) so far.
    func standardError() throws -> String {
        try String(contentsOf: logFile, encoding: .utf8)
    }

    /// A free loopback port, for an emulator whose `--notify-url` must name the server before it starts.
    static func freePort() throws -> UInt16 {
        // Below the kernel's ephemeral range: a port given out here is never the one the kernel picks for a client's
        // connection or for a server asked to listen on port 0, which it would be otherwise (between the check here
        // and the server's bind, anything in the process may take it). Each port is given out once per test run.
        let ephemeralStart =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32_768
        let range = max(1_024, ephemeralStart - 12_000)..<max(2_048, ephemeralStart)
        for _ in 0..<1_000 {
            let candidate = UInt16(Int.random(in: range))
            guard givenOut.withLock({ $0.insert(candidate).inserted }), canBind(candidate) else { continue }
            return candidate
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// The ports ``freePort()`` gave out so far.
    private static let givenOut = LockedValue<Set<UInt16>>([])

    /// Whether a socket can be bound to `port` on 127.0.0.1 now.
    private static func canBind(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    // MARK: - Clients

    /// An HS256 user token for `userId`, signed with `secret`, expiring `expiresIn` seconds from now.
    static func userToken(
        _ userId: String,
        expiresIn: Int = 3_600,
        secret: String = userSecret,
        header: String = #"{"alg":"HS256","typ":"JWT"}"#,
        claims: String? = nil
    ) throws -> String {
        let exp = Int(SystemClock().now.timeIntervalSince1970) + expiresIn
        let payload = claims ?? #"{"sub":"\#(userId)","exp":\#(exp)}"#
        let signingInput = base64URL(Data(header.utf8)) + "." + base64URL(Data(payload.utf8))
        let code = try HMACSHA256(key: Array(secret.utf8)).authenticationCode(for: Array(signingInput.utf8))
        return signingInput + "." + base64URL(Data(code))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Sends a request to the server.
    func send(
        _ method: String,
        _ path: String,
        bearer: String? = nil,
        headers: [String: String] = [:],
        body: String = ""
    ) async throws -> HTTPResponse {
        var all = headers
        if let bearer {
            all["Authorization"] = "Bearer \(bearer)"
        }
        if !body.isEmpty {
            all["Content-Type"] = "application/json"
        }
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
        let parts = path.split(separator: "?", maxSplits: 1)
        components?.path = String(parts[0])
        components?.percentEncodedQuery = parts.count > 1 ? String(parts[1]) : nil
        guard let url = components?.url else { throw IAPError(.invalidArgument, "bad path \(path)") }
        return try await transport.send(HTTPRequest(method: method, url: url, headers: all, body: Data(body.utf8)))
    }

    /// The app's submission of a signed transaction as `userId`.
    func submit(_ signedTransaction: String, as userId: String) async throws -> HTTPResponse {
        try await send(
            "POST",
            "/iap/v1/transactions",
            bearer: try Self.userToken(userId),
            body: #"{"signedTransaction":"\#(signedTransaction)"}"#
        )
    }

    /// Submits as the app's outbox does: again while the answer is `202` (the delivery is in flight elsewhere, such as
    /// for the notification of the same purchase), up to `attempts` times in all.
    func submitUntilFinished(
        _ signedTransaction: String,
        as userId: String,
        attempts: Int = 50
    ) async throws -> HTTPResponse {
        var response = try await submit(signedTransaction, as: userId)
        for _ in 1..<max(1, attempts) where response.status == 202 {
            try await Task.sleep(for: .milliseconds(100))
            response = try await submit(signedTransaction, as: userId)
        }
        return response
    }

    /// A new connection to the server from a loopback address (any of 127.0.0.0/8, so that a test can be several
    /// clients), its reads timing out after 10 s; the caller closes the descriptor.
    func connection(from source: String = "127.0.0.1") throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(baseURL.port ?? 0).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }

    /// Sends raw bytes on a new connection from `source` and returns everything the server answers before it closes
    /// (or 10 s). With `halfClose`, the sending side is shut after the bytes; without it, the request should ask
    /// for `Connection: close` (libmicrohttpd answers no request whose handler was still running when the client
    /// half-closed).
    func raw(_ bytes: [UInt8], from source: String = "127.0.0.1", halfClose: Bool = true) throws -> String {
        let fd = try connection(from: source)
        defer { close(fd) }
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { break }
            sent += written
        }
        if halfClose {
            shutdown(fd, Int32(SHUT_WR))
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

/// Polls `condition` every 100 ms until it holds or `seconds` pass.
func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() {
            return true
        }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}
