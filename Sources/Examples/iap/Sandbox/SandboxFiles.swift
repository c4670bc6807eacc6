import Foundation
import IAPCore
import IAPCrypto
import IAPPurchaseServer
import IAPTransportURLSession

/// The files of `iap sandbox` in its directory: made once, kept across runs, secrets mode 0600.
struct SandboxFiles {
    let directory: URL
    var authKey: URL { directory.appending(path: "AuthKey_\(SandboxCommand.keyId).p8") }
    var userJWTSecret: URL { directory.appending(path: "user-jwt-secret") }
    var serviceToken: URL { directory.appending(path: "service-token") }
    var controlToken: URL { directory.appending(path: "emulator-control-token") }
    var consoleSecret: URL { directory.appending(path: "console-secret") }
    var consoleOperators: URL { directory.appending(path: "console-operators.json") }
    var consolePassword: URL { directory.appending(path: "console-password") }
    var root: URL { directory.appending(path: "root.der") }
    var emulatorData: URL { directory.appending(path: "emulator") }
    var ledger: URL { directory.appending(path: "ledger") }
    var catalog: URL { directory.appending(path: "catalog.json") }

    /// Makes the directory (0700) and whatever of the key and the secrets it does not hold yet.
    ///
    /// - Parameters:
    ///   - directory: The directory.
    ///   - consoleOperator: Whether to make the console's secret, and an operator `admin` with a random password.
    /// - Throws: ``IAPError`` when the directory is a symbolic link or a file cannot be written.
    init(directory: URL, consoleOperator: Bool) throws {
        self.directory = directory.standardizedFileURL
        let path = self.directory.path
        if let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType,
            type == .typeSymbolicLink
        {
            throw IAPError(.unsafeFile, "\(path) is a symbolic link: give --dir a directory of its own")
        }
        try FileManager.default.createDirectory(
            at: self.directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        if !exists(authKey) {
            try writeSecret(authKey, P256PrivateKey().pemRepresentation)
        }
        for secret in [userJWTSecret, serviceToken] where !exists(secret) {
            try writeSecret(secret, Self.randomHex())
        }
        if consoleOperator {
            if !exists(consoleSecret) {
                try writeSecret(consoleSecret, Self.randomHex())
            }
            if !exists(consoleOperators) || !exists(consolePassword) {
                let password = Self.randomHex(bytes: 16)
                var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
                _ = try operators.set(name: "admin", role: .admin, password: password)
                try operators.write(to: consoleOperators)
                try writeSecret(consolePassword, password)
            }
        }
    }

    private func exists(_ file: URL) -> Bool {
        FileManager.default.fileExists(atPath: file.path)
    }

    /// Writes a file mode 0600, replacing it whole.
    func writeSecret(_ file: URL, _ text: String) throws {
        try SystemFile.replaceContents(of: file.path, with: Array((text + "\n").utf8))
    }

    /// Saves an emulator's root certificate (`GET /emulator/v1/root-certificate`) for the server's `--root`.
    ///
    /// - Parameters:
    ///   - origin: The emulator.
    ///   - tokenFile: Its control token's file; ``controlToken`` by default.
    ///   - rootFile: Where to save it; ``root`` by default.
    func saveRoot(from origin: String, token tokenFile: URL? = nil, to rootFile: URL? = nil) async throws {
        guard let url = URL(string: origin + "/emulator/v1/root-certificate") else {
            throw IAPError(.internalError, "the emulator's address \(origin) is not a URL")
        }
        let token = try String(contentsOf: tokenFile ?? controlToken, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: "GET", url: url, headers: ["X-Emulator-Control-Token": token])
        )
        guard response.status == 200, !response.body.isEmpty else {
            throw IAPError(.invalidConfiguration, "the emulator answered \(response.status) for its root certificate")
        }
        try SystemFile.replaceContents(of: (rootFile ?? root).path, with: Array(response.body))
    }

    /// Saves the emulator's built-in catalog for the server, and returns where.
    func saveBuiltInCatalog(_ products: [CatalogProduct]) throws -> URL {
        let data = try StaticProductCatalog(products: products).jsonRepresentation()
        try SystemFile.replaceContents(of: catalog.path, with: Array(data))
        return catalog
    }

    /// Random bytes in hexadecimal.
    static func randomHex(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<bytes).map { _ in generator.next() as UInt8 })
    }
}
