import Foundation
import IAPCore
import Testing

/// `iap console add-operator`: the password from standard input, never the command line, into a private file.
@Suite("iap console add-operator")
struct ConsoleCommandTests {
    typealias CLI = CommandLineContractTests

    @Test func anOperatorIsAddedFromStandardInputAndUpdatedAfter() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "operators.json").path
        let added = try await CLI.iap(
            ["console", "add-operator", "carol", "--role", "support", "--operators-file", file],
            input: Data("correct horse battery\n".utf8)
        )
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdoutLines == ["added carol (support)"])
        #expect(!added.stdout.contains("correct horse") && !added.stderr.contains("correct horse"))
        let updated = try await CLI.iap(
            ["console", "add-operator", "carol", "--role", "admin", "--operators-file", file],
            input: Data("a new long password\r\n".utf8)
        )
        #expect(updated.stdoutLines == ["updated carol (admin)"])
        // One operator, with the new role and a new salted hash; no password in the file.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let stored = try CLI.json(text)
        let list = try #require(stored["operators"] as? [[String: Any]])
        #expect(
            list.count == 1 && list.first?["role"] as? String == "admin" && list.first?["name"] as? String == "carol"
        )
        #expect((list.first?["passwordHash"] as? String)?.hasPrefix("pbkdf2-sha256$310000$") == true)
        #expect(!text.contains("a new long password"))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        for (arguments, input, said) in [
            (["carol", "--role", "root", "--operators-file", file], "long enough pass\n", "--role must be"),
            (["carol", "--role", "admin"], "long enough pass\n", "--operators-file FILE is required"),
            (["carol", "--role", "admin", "--operators-file", file], "short\n", "fewer than 10 characters"),
            (["carol", "--role", "admin", "--operators-file", file], "", "no password on standard input"),
            (["<b>", "--role", "admin", "--operators-file", file], "long enough pass\n", "an operator's name is"),
        ] {
            let refused = try await CLI.iap(["console", "add-operator"] + arguments, input: Data(input.utf8))
            #expect(refused.status == 2, "\(arguments)")
            #expect(refused.stderr.contains(said), "\(refused.stderr)")
        }
    }
}
