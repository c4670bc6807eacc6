import Foundation
import IAPCore
import IAPCrypto
import IAPPurchaseServer
import Testing

/// The console's operators file: salted slow hashes, a private file, sign-in that tells nothing about names.
@Suite("Console operators")
struct ConsoleOperatorsTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func anOperatorSignsInWithTheirPasswordOnlyAndTheFileKeepsNoPassword() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "operators.json")
        var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
        #expect(try operators.set(name: "carol", role: .support, password: "correct horse battery") == false)
        #expect(try operators.set(name: "dave", role: .viewer, password: "another long password") == false)
        try operators.write(to: file)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("correct horse") && text.contains("pbkdf2-sha256$310000$"))

        let read = try ConsoleOperators(contentsOf: file, derivation: PBKDF2HMACSHA256())
        #expect(read.signIn(name: "carol", password: "correct horse battery")?.role == .support)
        #expect(read.signIn(name: "carol", password: "correct horse batterY") == nil)
        #expect(read.signIn(name: "dave", password: "correct horse battery") == nil)
        #expect(read.signIn(name: "nobody", password: "correct horse battery") == nil)
        #expect(read.signIn(name: "CAROL", password: "correct horse battery") == nil)

        // The same password twice gives two hashes: each has a salt of its own.
        var again = read
        #expect(try again.set(name: "carol", role: .admin, password: "correct horse battery") == true)
        #expect(
            again.operators.first { $0.name == "carol" }?.passwordHash
                != read.operators.first { $0.name == "carol" }?.passwordHash
        )
        #expect(again.signIn(name: "carol", password: "correct horse battery")?.role == .admin)
    }

    @Test func refusedNamesPasswordsAndFiles() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
        for name in ["", "carol smith", "<script>", String(repeating: "a", count: 65), "caröl"] {
            #expect(throws: IAPError.self) {
                try operators.set(name: name, role: .viewer, password: "long enough pass")
            }
        }
        #expect(throws: IAPError.self) { try operators.set(name: "carol", role: .viewer, password: "short") }

        let file = directory.appending(path: "operators.json")
        try operators.set(name: "carol", role: .viewer, password: "long enough pass")
        try operators.write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let open = try #require(throws: IAPError.self) {
            try ConsoleOperators(contentsOf: file, derivation: PBKDF2HMACSHA256())
        }
        #expect(open.message.contains("chmod 600"))
        for broken in [
            #"{"version":1,"operators":[{"name":"x","role":"root","passwordHash":"a$b$c$d"}]}"#,
            #"{"version":2,"operators":[]}"#, "not json",
            #"{"version":1,"operators":[{"name":"x","role":"viewer","passwordHash":"pbkdf2-sha256$10$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA"}]}"#,
        ] {
            try Data(broken.utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            let error = try #require(throws: IAPError.self) {
                try ConsoleOperators(contentsOf: file, derivation: PBKDF2HMACSHA256())
            }
            #expect(error.code == .invalidConfiguration)
        }
    }

    @Test func rolesGrantWhatTheirNamesSay() {
        #expect(!ConsoleRole.viewer.mayRedeliver && !ConsoleRole.viewer.mayGiveUp)
        #expect(ConsoleRole.support.mayRedeliver && !ConsoleRole.support.mayGiveUp)
        #expect(ConsoleRole.admin.mayRedeliver && ConsoleRole.admin.mayGiveUp)
    }
}
