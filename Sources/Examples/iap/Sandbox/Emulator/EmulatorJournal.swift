#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPCrypto

/// The emulator's `--data` directory: what it needs to come back after a restart as it was.
///
/// - `store.json` holds the signing chain (certificates and private keys), the clock's starting time and the bundle
///   id, so that a restarted emulator signs with the same root and dates as before.
/// - `journal.jsonl` holds every change that succeeded (a `2xx` answer), with its status, one JSON object a line, in
///   the order they were applied. A restart replays them through the same code, which makes the same transactions
///   with the same ids. Notifications the replay makes again are recorded but not posted a second time.
///
/// The directory is created 0700 and both files 0600, and neither file is opened through a symbolic link
/// (`SystemFile.open`). Each entry is flushed to disk before the request is answered. A last line cut short
/// by a crash is dropped; a complete line that does not parse stops the emulator with an error. The journal holds at most ``maximumBytes``: a change that would pass it is refused before
/// it is applied.
final class EmulatorJournal: Sendable {
    /// One request that changed the store.
    struct Entry: Codable, Sendable {
        /// The HTTP method.
        var method: String
        /// The path, without its query.
        var path: String
        /// The request body, as UTF-8 text.
        var body: String
        /// The status it was answered with; a replay must answer the same.
        var status: Int?
    }

    /// What `store.json` holds.
    struct State: Codable, Sendable {
        var version: Int
        var bundleId: String
        var startMillis: Int64
        var root: String
        var rootKey: String
        var intermediate: String
        var intermediateKey: String
        var leaf: String
        var leafKey: String
        /// The first transaction id the store hands out (`--first-transaction-id`); `nil` in a directory made before
        /// the option, or without it: the store's default.
        var firstTransactionId: UInt64?
    }

    /// The default cap on the journal: 16 MiB, some 100,000 purchases.
    static let defaultMaximumBytes = 16 << 20

    /// The directory.
    let directory: URL
    /// The persisted state.
    let state: State
    /// The entries the directory held when it was opened, oldest first: what a restart replays.
    let replay: [Entry]
    /// The largest the journal may grow, in bytes.
    let maximumBytes: Int
    private let file: SystemFile
    private let size: LockedValue<Int>

    /// Opens a data directory, creating it and its state when new.
    ///
    /// - Parameters:
    ///   - directory: The directory.
    ///   - bundleId: The bundle id the emulator runs with; it must match the directory's.
    ///   - maximumBytes: The cap on the journal.
    ///   - firstTransactionId: The `--first-transaction-id` given, if any: it must match the directory's.
    ///   - newState: Makes the state of a new directory.
    /// - Throws: ``IAPError`` `.invalidConfiguration` when the directory is unreadable, damaged or belongs to another
    ///   app or another first transaction id; `.storageFailure` when it cannot be written, or a file in it is a
    ///   symbolic link.
    init(
        directory: URL,
        bundleId: String,
        maximumBytes: Int = defaultMaximumBytes,
        firstTransactionId: UInt64? = nil,
        newState: () throws -> State
    ) throws {
        self.directory = directory
        self.maximumBytes = maximumBytes
        try SystemFile.createDirectory(directory.path)
        let statePath = directory.appending(path: "store.json").path
        if let bytes = try SystemFile.readContents(of: statePath, maximumSize: 1 << 20) {
            do {
                state = try JSONDecoder().decode(State.self, from: Data(bytes))
            } catch {
                throw IAPError(.invalidConfiguration, "cannot read \(statePath): \(error)")
            }
            guard state.version == 1 else {
                throw IAPError(.invalidConfiguration, "\(statePath) has version \(state.version); expected 1")
            }
            guard state.bundleId == bundleId else {
                throw IAPError(
                    .invalidConfiguration,
                    "the data directory belongs to bundle id '\(state.bundleId)', not '\(bundleId)'"
                )
            }
            if let firstTransactionId, firstTransactionId != state.firstTransactionId {
                // A replay hands out the same ids again only from the same first one.
                throw IAPError(
                    .invalidConfiguration,
                    "the data directory's store hands out transaction ids from "
                        + (state.firstTransactionId.map(String.init) ?? "the default")
                        + ", not \(firstTransactionId): leave --first-transaction-id as it was"
                )
            }
        } else {
            state = try newState()
            try SystemFile.replaceContents(of: statePath, with: Array(try JSONEncoder().encode(state)))
        }
        let journalPath = directory.appending(path: "journal.jsonl").path
        let journal = try SystemFile.open(journalPath, flags: O_RDWR | O_CREAT | O_APPEND)
        var existing = try journal.readToEnd(maximumSize: Int.max)
        // A last line cut short by a crash is dropped, so that the next entry starts a line of its own.
        if let last = existing.last, last != UInt8(ascii: "\n") {
            let keep = existing.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            try journal.truncate(to: keep)
            existing.removeSubrange(keep...)
        }
        replay = try Self.parse(existing, path: journalPath)
        size = LockedValue(existing.count)
        file = journal
    }

    /// The signing chain the state holds.
    ///
    /// - Returns: The PKI.
    /// - Throws: ``IAPError`` when a certificate or key does not parse.
    func pki() throws -> TestPKI {
        func bytes(_ text: String) throws -> [UInt8] {
            guard let data = Data(base64Encoded: text) else {
                throw IAPError(.invalidConfiguration, "store.json holds a value that is not base64")
            }
            return Array(data)
        }
        return TestPKI(
            root: try X509Certificate(derEncoded: bytes(state.root)),
            rootKey: try P256PrivateKey(derRepresentation: bytes(state.rootKey)),
            intermediate: try X509Certificate(derEncoded: bytes(state.intermediate)),
            intermediateKey: try P256PrivateKey(derRepresentation: bytes(state.intermediateKey)),
            leaf: try X509Certificate(derEncoded: bytes(state.leaf)),
            leafKey: try P256PrivateKey(derRepresentation: bytes(state.leafKey))
        )
    }

    /// The state of a new directory.
    static func state(bundleId: String, start: Date, pki: TestPKI, firstTransactionId: UInt64? = nil) -> State {
        func text(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
        return State(
            version: 1,
            bundleId: bundleId,
            startMillis: start.millisecondsSince1970,
            root: text(pki.root.derBytes),
            rootKey: text(pki.rootKey.derRepresentation),
            intermediate: text(pki.intermediate.derBytes),
            intermediateKey: text(pki.intermediateKey.derRepresentation),
            leaf: text(pki.leaf.derBytes),
            leafKey: text(pki.leafKey.derRepresentation),
            firstTransactionId: firstTransactionId
        )
    }

    /// The entries of a journal's complete lines (a line cut short by a crash was dropped before).
    private static func parse(_ bytes: [UInt8], path: String) throws -> [Entry] {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        var entries: [Entry] = []
        for (index, line) in lines.enumerated() {
            guard let entry = try? JSONDecoder().decode(Entry.self, from: Data(line)) else {
                throw IAPError(.invalidConfiguration, "line \(index + 1) of \(path) is damaged")
            }
            entries.append(entry)
        }
        return entries
    }

    /// The line an entry takes in the journal.
    ///
    /// - Throws: ``IAPError`` `.internalError` when it cannot be encoded.
    func line(for entry: Entry) throws -> [UInt8] {
        do {
            var line = Array(try JSONEncoder().encode(entry))
            line.append(UInt8(ascii: "\n"))
            return line
        } catch {
            throw IAPError(.internalError, "cannot encode a journal entry: \(error)")
        }
    }

    /// Whether a line of `count` bytes still fits under ``maximumBytes``.
    func hasRoom(for count: Int) -> Bool {
        size.withLock { $0 + count <= maximumBytes }
    }

    /// The journal's size in bytes.
    var byteCount: Int {
        size.withLock { $0 }
    }

    /// Appends an entry and flushes it to disk.
    ///
    /// - Parameter entry: The request that changed the store.
    /// - Throws: ``IAPError`` `.storageFailure`.
    func append(_ entry: Entry) throws {
        let bytes = try line(for: entry)
        try file.write(bytes)
        try file.sync()
        size.withLock { $0 += bytes.count }
    }
}
