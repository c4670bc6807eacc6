import Foundation
import IAPCore
import Testing

/// `SecretFile`: the rules `iap serve` applies to its secret files, for every embedder.
@Suite("SecretFile: private files, one trailing newline, never printed")
struct SecretFileTests {
    static let secret = "6f0c2a9e41d7b3c8a5e2f1d0c9b8a7e6"

    /// A file with `text` and `mode` in a fresh directory; the directory is removed after `body`.
    static func withFile(_ text: String, mode: Int, _ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "secret")
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        try body(file)
    }

    @Test(arguments: ["", "\n", "\r\n"])
    func oneTrailingNewlineIsNotPartOfTheSecret(ending: String) throws {
        try Self.withFile(Self.secret + ending, mode: 0o600) { file in
            let secret = try SecretFile.read(file)
            #expect(secret == Array(Self.secret.utf8))
        }
    }

    @Test func onlyOneNewlineIsTrimmedAndNothingElse() throws {
        try Self.withFile(" \(Self.secret)\n\n", mode: 0o600) { file in
            let secret = try SecretFile.read(file)
            #expect(secret == Array(" \(Self.secret)\n".utf8))
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o606])
    func aFileItsGroupOrOthersMayOpenIsRefusedWithTheFix(mode: Int) throws {
        try Self.withFile(Self.secret + "\n", mode: mode) { file in
            let error = try #require(throws: IAPError.self) { try SecretFile.read(file) }
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains("chmod 600 \(file.path)"))
            #expect(!error.message.contains(Self.secret))
        }
    }

    @Test(arguments: ["", "\n", "\r\n"])
    func anEmptySecretIsRefused(text: String) throws {
        try Self.withFile(text, mode: 0o600) { file in
            let error = try #require(throws: IAPError.self) { try SecretFile.read(file) }
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.hasSuffix("is empty"))
        }
    }

    @Test func aMissingFileIsRefusedByName() throws {
        let missing = FileManager.default.temporaryDirectory.appending(path: "iap-no-such-secret-\(UUID().uuidString)")
        let error = try #require(throws: IAPError.self) {
            try SecretFile.read(atPath: missing.path, describedAs: "--grant-secret-file")
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.hasPrefix("cannot read --grant-secret-file \(missing.path)"))
    }

    @Test func aFileOverOneMebibyteIsNotASecretFile() throws {
        try Self.withFile(String(repeating: "a", count: SecretFile.maximumSize + 1), mode: 0o600) { file in
            let error = try #require(throws: IAPError.self) { try SecretFile.read(file) }
            #expect(error.message.contains("larger than 1 MiB"))
        }
    }

    @Test func aPasswordIsTheFirstLine() throws {
        try Self.withFile("pass word\r\nsecond line\n", mode: 0o600) { file in
            let password = try SecretFile.password(atPath: file.path, describedAs: "the password file")
            #expect(password == "pass word")
        }
        try Self.withFile("\nsecond line\n", mode: 0o600) { file in
            #expect(throws: IAPError.self) { try SecretFile.password(atPath: file.path, describedAs: "it") }
        }
    }
}
