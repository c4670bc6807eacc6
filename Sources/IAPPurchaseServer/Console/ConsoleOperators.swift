#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// What an operator of the console may do.
public enum ConsoleRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Looks only.
    case viewer
    /// Also redelivers and retries.
    case support
    /// Also gives up dead letters.
    case admin

    /// Whether the role may redeliver an order and retry a delivery now.
    public var mayRedeliver: Bool { self != .viewer }
    /// Whether the role may give a dead letter up.
    public var mayGiveUp: Bool { self == .admin }
}

/// One operator: a name, a role, and the password kept as a salted, slow hash.
public struct ConsoleOperator: Sendable, Hashable {
    /// The name an operator signs in with, and the audit names them by.
    public var name: String
    /// What they may do.
    public var role: ConsoleRole
    /// The password's hash: `<derivation>$<iterations>$<salt, base64url>$<hash, base64url>`.
    public var passwordHash: String
}

/// The console's operators, kept in a private file (`--console-operators-file`): JSON
/// `{"version": 1, "operators": [{"name", "role", "passwordHash"}]}`, each password a PBKDF2-HMAC-SHA256 hash with a
/// salt of its own (``PasswordKeyDerivation``). `iap console add-operator` writes it; `iap serve` reads it.
///
/// A file its group or others may open is refused, as a secret file is: the hashes are slow to attack, not impossible.
/// A sign-in costs one derivation whether or not the name exists, so that its time does not tell.
public struct ConsoleOperators: Sendable {
    /// The operators, by name.
    public private(set) var operators: [ConsoleOperator]
    private let derivation: any PasswordKeyDerivation

    /// The iterations of a new hash.
    public static let iterations = 310_000
    /// The shortest password accepted.
    public static let minimumPasswordLength = 10
    /// The longest name accepted.
    public static let maximumNameLength = 64

    /// An empty list.
    ///
    /// - Parameter derivation: Hashes and checks passwords (`PBKDF2HMACSHA256()` of `IAPCrypto`).
    public init(derivation: some PasswordKeyDerivation) {
        self.operators = []
        self.derivation = derivation
    }

    /// Reads the operators file.
    ///
    /// - Parameters:
    ///   - file: The file (`--console-operators-file`).
    ///   - derivation: Hashes and checks passwords.
    /// - Throws: ``IAPError`` `invalidConfiguration` when the file cannot be read, is open to its group or others, or
    ///   is not an operators file (naming the line's problem, never a hash).
    public init(contentsOf file: URL, derivation: some PasswordKeyDerivation) throws(IAPError) {
        self.derivation = derivation
        let bytes = try SecretFile.contents(atPath: file.path, describedAs: "the console operators file")
        let stored: StoredFile
        do {
            stored = try JSONDecoder().decode(StoredFile.self, from: Data(bytes))
        } catch {
            throw IAPError(.invalidConfiguration, "the console operators file \(file.path) is not an operators file")
        }
        guard stored.version == 1 else {
            throw IAPError(.invalidConfiguration, "the console operators file has version \(stored.version), not 1")
        }
        var operators: [ConsoleOperator] = []
        for item in stored.operators {
            guard Self.isValid(name: item.name) else {
                throw IAPError(.invalidConfiguration, "the console operators file names an invalid operator")
            }
            guard let role = ConsoleRole(rawValue: item.role) else {
                throw IAPError(.invalidConfiguration, "operator \(item.name) has an unknown role '\(item.role)'")
            }
            guard Self.parse(item.passwordHash) != nil else {
                throw IAPError(.invalidConfiguration, "operator \(item.name)'s password hash is not one")
            }
            guard !operators.contains(where: { $0.name.isSameUser(as: item.name) }) else {
                throw IAPError(.invalidConfiguration, "operator \(item.name) is named twice")
            }
            operators.append(ConsoleOperator(name: item.name, role: role, passwordHash: item.passwordHash))
        }
        self.operators = operators
    }

    /// Whether a name may name an operator: 1 to 64 letters, digits, `.`, `_`, `-` or `@`.
    public static func isValid(name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumNameLength
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-@".unicodeScalars.contains($0))
            }
    }

    /// Adds an operator, or gives an existing one a new role and password.
    ///
    /// - Parameters:
    ///   - name: The operator's name.
    ///   - role: Their role.
    ///   - password: Their password, at least ``minimumPasswordLength`` characters.
    /// - Returns: Whether the operator existed already.
    /// - Throws: ``IAPError`` `invalidArgument` for a name or password that is refused.
    @discardableResult
    public mutating func set(name: String, role: ConsoleRole, password: String) throws(IAPError) -> Bool {
        guard Self.isValid(name: name) else {
            throw IAPError(
                .invalidArgument,
                "an operator's name is 1 to \(Self.maximumNameLength) letters, digits, '.', '_', '-' or '@'"
            )
        }
        guard password.count >= Self.minimumPasswordLength else {
            throw IAPError(.invalidArgument, "a password has at least \(Self.minimumPasswordLength) characters")
        }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices {
            salt[index] = generator.next()
        }
        let hash = try derivation.derive(
            password: Array(password.utf8),
            salt: salt,
            iterations: Self.iterations,
            length: 32
        )
        let encoded = [derivation.name, String(Self.iterations), Base64.encodeURL(salt), Base64.encodeURL(hash)]
            .joined(separator: "$")
        let added = ConsoleOperator(name: name, role: role, passwordHash: encoded)
        if let index = operators.firstIndex(where: { $0.name.isSameUser(as: name) }) {
            operators[index] = added
            return true
        }
        operators.append(added)
        return false
    }

    /// The operator a name and password sign in as, or `nil`: one derivation either way, compared in constant time.
    ///
    /// - Parameters:
    ///   - name: The name given.
    ///   - password: The password given.
    /// - Returns: The operator, when both match.
    public func signIn(name: String, password: String) -> ConsoleOperator? {
        let found = operators.first { $0.name.isSameUser(as: name) }
        // An unknown name costs the same derivation, against a hash nobody's password gives.
        let stored = found.flatMap { Self.parse($0.passwordHash) } ?? Self.decoy
        guard stored.derivation == derivation.name,
            let derived = try? derivation.derive(
                password: Array(password.utf8),
                salt: stored.salt,
                iterations: stored.iterations,
                length: stored.hash.count
            )
        else { return nil }
        var difference: UInt8 = 0
        for (left, right) in zip(derived, stored.hash) {
            difference |= left ^ right
        }
        guard difference == 0, derived.count == stored.hash.count, let found else { return nil }
        return found
    }

    /// The file's JSON, operators by name.
    public func jsonRepresentation() throws(IAPError) -> Data {
        let stored = StoredFile(
            version: 1,
            operators: operators.sorted { $0.name < $1.name }.map {
                StoredFile.Operator(name: $0.name, role: $0.role.rawValue, passwordHash: $0.passwordHash)
            }
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            return try encoder.encode(stored) + Data("\n".utf8)
        } catch {
            throw IAPError(.internalError, "the operators cannot be encoded")
        }
    }

    /// Writes the file privately (0600), replacing it whole: a crash leaves the old file or the new one.
    ///
    /// - Parameter file: The file.
    /// - Throws: ``IAPError`` when it cannot be written.
    public func write(to file: URL) throws(IAPError) {
        do {
            try SystemFile.replaceContents(of: file.path, with: [UInt8](try jsonRepresentation()))
        } catch let error as IAPError {
            throw error
        } catch {
            throw IAPError(.storageFailure, "cannot write \(file.path)")
        }
    }

    /// The file's shape.
    private struct StoredFile: Codable {
        struct Operator: Codable {
            var name: String
            var role: String
            var passwordHash: String
        }
        var version: Int
        var operators: [Operator]
    }

    // MARK: - Hashes

    struct StoredHash {
        var derivation: String
        var iterations: Int
        var salt: [UInt8]
        var hash: [UInt8]
    }

    static func parse(_ text: String) -> StoredHash? {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, let iterations = Int(parts[1]), iterations >= 100_000, iterations <= 100_000_000,
            let salt = Base64.decodeURL(parts[2]), salt.count >= 16,
            let hash = Base64.decodeURL(parts[3]), (16...64).contains(hash.count)
        else { return nil }
        return StoredHash(derivation: String(parts[0]), iterations: iterations, salt: salt, hash: hash)
    }

    /// What an unknown name is checked against: the cost of a real sign-in, and no password matches it.
    private static let decoy = StoredHash(
        derivation: "pbkdf2-sha256",
        iterations: iterations,
        salt: [UInt8](repeating: 0x5A, count: 16),
        hash: [UInt8](repeating: 0, count: 32)
    )
}
