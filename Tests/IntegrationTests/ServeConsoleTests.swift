import Foundation
import IAPCore
import IAPTestSupport
import IAPTransportURLSession
import Testing

/// `iap serve --console-port`: the console on a listener of its own, named on the second line of standard output.
@Suite("iap serve: the console's listener")
struct ServeConsoleTests {
    typealias CLI = CommandLineContractTests

    static func options(_ directory: URL) -> [String] {
        [
            "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id", "com.example.app",
            "--environment", "Sandbox", "--ledger-only",
        ]
    }

    /// An operators file with carol (support), written by `iap console add-operator`, and a console secret.
    static func consoleFiles(_ directory: URL) async throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let operators = directory.appending(path: "operators.json").path
        let added = try await CLI.iap(
            ["console", "add-operator", "carol", "--role", "support", "--operators-file", operators],
            input: Data("correct horse battery\n".utf8)
        )
        try #require(added.status == 0, "\(added.stderr)")
        let secret = directory.appending(path: "console.secret")
        try ServeProcess.writePrivate("6f1b7c7e3f524a8e9a1e0c2d9f6b5a10c0ffee00\n", to: secret)
        return ["--console-operators-file", operators, "--console-secret-file", secret.path]
    }

    @Test func theConsoleListensOnItsOwnPortAndThePurchaseServerDoesNotServeIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-console-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try await Self.consoleFiles(directory)
        let server = try await ServeProcess.start(
            Self.options(directory) + ["--console-port", "0", "--console-insecure-cookies"] + files,
            directory: directory
        )
        defer { server.stop() }
        let console = try #require(server.consoleURL, "no 'console on' line")
        #expect(console.absoluteString.hasPrefix("http://127.0.0.1:"))
        #expect(console.port != server.baseURL.port)
        let page = try await URLSessionTransport().send(
            HTTPRequest(method: "GET", url: console.appending(path: "console/sign-in"))
        )
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains(">Operator</label>") && html.contains(">Sign in</button>"))
        let policy = page.headers.first { $0.key.lowercased() == "content-security-policy" }?.value
        #expect(policy?.contains("default-src 'none'") == true, "\(page.headers)")
        // The purchase server's own port has no console.
        #expect(try await server.send("GET", "/console/sign-in").status == 404)
    }

    @Test func theConsoleOptionsGoTogetherAndItsFilesArePrivate() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-console-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try await Self.consoleFiles(directory)
        let secrets = [
            "--user-jwt-secret-file", directory.appending(path: "user.secret").path, "--service-token-file",
            directory.appending(path: "service.token").path,
        ]
        try ServeProcess.writePrivate(ServeProcess.userSecret + "\n", to: directory.appending(path: "user.secret"))
        try ServeProcess.writePrivate(ServeProcess.serviceToken + "\n", to: directory.appending(path: "service.token"))
        let cases: [([String], String)] = [
            (["--console-port", "0", files[2], files[3]], "--console-operators-file FILE is required"),
            (["--console-port", "0", files[0], files[1]], "--console-secret-file FILE is required"),
            (["--console-host", "127.0.0.1"], "--console-host goes with --console-port"),
            (["--console-port", "x"] + files, "--console-port must be"),
        ]
        for (extra, said) in cases {
            let run = try await CLI.iap(["serve"] + Self.options(directory) + secrets + extra)
            #expect(run.status == 2, "\(extra)")
            #expect(run.stderr.contains(said), "\(run.stderr)")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: files[1])
        let open = try await CLI.iap(["serve"] + Self.options(directory) + secrets + ["--console-port", "0"] + files)
        #expect(open.status == 2)
        #expect(open.stderr.contains("chmod 600"), "\(open.stderr)")
    }
}
