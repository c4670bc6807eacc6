import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPStoragePostgres

/// `iap-bench serve --database URL --processes P`: the purchase server's routes in processes of their own on one
/// PostgreSQL schema, one process against P, as a fleet of `iap serve` instances shares one database.
extension ServeBenchmark {
    /// The environment variable that hands the clients' HS256 secret (hexadecimal) to a server process, off its
    /// command line.
    static let userSecretVariable = "IAP_BENCH_USER_SECRET"

    /// One server process against `options.processes`, each on a new schema; submissions per second and the ratio.
    static func measureProcesses(
        _ options: Options,
        _ setup: PipelineBenchmark.Setup,
        url: String,
        directory: URL
    ) async throws -> [String: Any] {
        let rootFile = directory.appendingPathComponent("root.der")
        try Data(setup.root.derBytes).write(to: rootFile)
        var secret = [UInt8](repeating: 0, count: 32)
        for index in secret.indices {
            secret[index] = UInt8.random(in: 0...255)
        }
        let servers = Servers(url: url, rootFile: rootFile, secret: secret, userKey: try HMACSHA256(key: secret))
        let one = try await serveFromProcesses(1, options, setup, servers)
        let several = try await serveFromProcesses(options.processes, options, setup, servers)
        let onePerSecond = one["submissionsPerSecond"] as? Double ?? 0
        let severalPerSecond = several["submissionsPerSecond"] as? Double ?? 0
        let ratio = onePerSecond > 0 ? severalPerSecond / onePerSecond : 0
        return [
            "one": one,
            "several": several,
            "ratio": (ratio * 1000).rounded() / 1000,
            "unit": "submissions answered 200 per second by server processes sharing one schema",
        ]
    }

    /// What every server process of a run is given.
    struct Servers {
        let url: String
        let rootFile: URL
        let secret: [UInt8]
        let userKey: HMACSHA256
    }

    /// A server process as the parent sees it.
    private struct Child {
        let process: Process
        let output: Pipe
        let input: Pipe
    }

    /// `count` server processes on a new schema, the clients spread over them for S seconds; every submission
    /// answered 200 must have been granted once by one of them.
    private static func serveFromProcesses(
        _ count: Int,
        _ options: Options,
        _ setup: PipelineBenchmark.Setup,
        _ servers: Servers
    ) async throws -> [String: Any] {
        let schema = "iap_bench_serve_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // Create the schema first, so the processes serve rather than migrate; it is dropped at the end.
        let owner = try await PostgresEntitlementStore(
            configuration: .init(url: servers.url, schema: schema, poolSize: 1)
        )
        var children: [Child] = []
        do {
            let perProcess = max(1, options.clients / count)
            for _ in 0..<count {
                children.append(try spawnServer(servers, schema: schema, clients: perProcess))
            }
            var ports: [UInt16] = []
            for child in children {
                ports.append(try port(of: child))
            }
            Output.error("\(options.clients) clients for \(options.seconds) s against \(count) server processes")
            let clients = try (0..<options.clients).map { index in
                (
                    port: ports[index % count],
                    bearer: "Bearer " + (try userToken("bench-user-\(index)", key: servers.userKey))
                )
            }
            let began = ContinuousClock.now
            let totals = await send(setup.tokens, to: clients, until: began + .seconds(options.seconds))
            let elapsed = ContinuousClock.now - began
            var granted = 0
            for child in children {
                granted += try stop(child)
            }
            children = []
            let served = totals.latencies.count
            guard granted == served else {
                throw IAPError(
                    .internalError,
                    "the processes answered \(served) submissions 200 but granted \(granted)"
                )
            }
            try await owner.dropSchema()
            await owner.close()
            return [
                "processes": count,
                "connectionsPerProcess": perProcess,
                "submissions": served,
                "submissionsPerSecond": (Double(served) / elapsed.timeInterval).rounded(),
                "errors": totals.errors,
            ]
        } catch {
            for child in children where child.process.isRunning {
                child.process.terminate()
                child.process.waitUntilExit()
            }
            try? await owner.dropSchema()
            await owner.close()
            throw error
        }
    }

    /// Starts this executable as a server process on `schema`.
    private static func spawnServer(_ servers: Servers, schema: String, clients: Int) throws -> Child {
        let process = Process()
        process.executableURL = try ChildProcess.ownExecutable()
        process.arguments = [
            "serve", "--child-server", "--database", servers.url, "--schema", schema,
            "--root-file", servers.rootFile.path, "--clients", String(clients),
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[userSecretVariable] = hex(servers.secret)
        process.environment = environment
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        return Child(process: process, output: output, input: input)
    }

    /// The port a server process printed on its first line once it listened.
    private static func port(of child: Child) throws -> UInt16 {
        var bytes: [UInt8] = []
        while bytes.firstIndex(of: UInt8(ascii: "\n")) == nil {
            let chunk = child.output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw IAPError(.internalError, "a server process exited before it listened")
            }
            bytes += chunk
        }
        guard let line = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let port = (line["port"] as? NSNumber).flatMap({ UInt16(exactly: $0.intValue) })
        else {
            throw IAPError(.internalError, "a server process printed no port")
        }
        return port
    }

    /// Closes a server process's input, which stops it, and returns how many deliveries it granted.
    private static func stop(_ child: Child) throws -> Int {
        try child.input.fileHandleForWriting.close()
        let data = child.output.fileHandleForReading.readDataToEndOfFile()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0,
            let line = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let grants = (line["grants"] as? NSNumber)?.intValue
        else {
            throw IAPError(
                .internalError,
                "a server process failed with status \(child.process.terminationStatus)"
            )
        }
        return grants
    }

    // MARK: - The server process

    /// `--child-server`: the purchase server's routes over the parent's schema on 127.0.0.1 and a free port; prints
    /// the port, serves until its input closes, then prints the deliveries it granted.
    static func runChildServer(_ arguments: Arguments) async -> Never {
        do {
            guard let url = try arguments.value("database"), let schema = try arguments.value("schema"),
                let rootPath = try arguments.value("root-file"),
                let clients = try arguments.value("clients").flatMap({ Int($0) }), (1...256).contains(clients)
            else {
                spec.fail(
                    Arguments.UsageError(
                        message: "--child-server takes --database, --schema, --root-file and --clients"
                    )
                )
            }
            guard let secret = ProcessInfo.processInfo.environment[userSecretVariable].flatMap(bytes(hex:)),
                !secret.isEmpty
            else {
                throw IAPError(.internalError, "\(userSecretVariable) holds no hexadecimal secret")
            }
            let root = try X509Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: rootPath))))
            let setup = try PipelineBenchmark.Setup(root: root)
            let store = try await PostgresEntitlementStore(
                configuration: .init(url: url, schema: schema, poolSize: clients)
            )
            let hook = PipelineBenchmark.CountingHook()
            let http = try serve(
                setup,
                store: store,
                hook: hook,
                userKey: try HMACSHA256(key: secret),
                clients: clients
            )
            FileHandle.standardOutput.write(Data(#"{"port":\#(http.port)}"#.utf8 + [UInt8(ascii: "\n")]))
            await endOfInput()
            await http.shutdown()
            await store.close()
            let granted = hook.grants.withLock { $0 }
            FileHandle.standardOutput.write(Data(#"{"grants":\#(granted)}"#.utf8 + [UInt8(ascii: "\n")]))
            terminate(.success)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
    }

    /// Returns when standard input reaches its end, read on a thread of its own.
    private static func endOfInput() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = FileHandle.standardInput.readDataToEndOfFile()
                continuation.resume()
            }
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}
