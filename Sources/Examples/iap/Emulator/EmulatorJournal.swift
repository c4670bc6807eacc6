import Foundation
import IAPCore
import IAPCrypto

/// The emulator's `--data` directory: what it needs to come back after a restart as it was.
///
/// - `store.json` holds the signing chain (certificates and keys), the clock's starting time and the bundle id, so
///   that a restarted emulator signs with the same root and dates as before.
/// - `journal.jsonl` holds every request that may have changed the store, with the status it was answered with, one
///   JSON object a line, in the order they were applied. A restart replays them through the same code, which makes the same transactions with the same ids.
///   Notifications the replay makes again are recorded but not posted a second time.
///
/// Each entry is flushed to disk before the request is answered. A last line cut short by a crash is ignored.
final class EmulatorJournal: Sendable {
    /// One request that changed the store.
    struct Entry: Codable, Sendable {
        /// The HTTP method.
        var method: String
        /// The path, with its query.
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
    }

    /// The directory.
    let directory: URL
    /// The persisted state.
    let state: State
    private let handle: FileHandle

    private var journalURL: URL { directory.appending(path: "journal.jsonl") }

    /// Opens a data directory, creating it and its state when new.
    ///
    /// - Parameters:
    ///   - directory: The directory.
    ///   - bundleId: The bundle id the emulator runs with; it must match the directory's.
    ///   - newState: Makes the state of a new directory.
    /// - Throws: ``IAPError`` `.invalidConfiguration` when the directory is unreadable or belongs to another app;
    ///   `.storageFailure` when it cannot be written.
    init(directory: URL, bundleId: String, newState: () throws -> State) throws {
        self.directory = directory
        let manager = FileManager.default
        let stateURL = directory.appending(path: "store.json")
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw IAPError(.storageFailure, "cannot create the data directory \(directory.path): \(error)")
        }
        if manager.fileExists(atPath: stateURL.path) {
            do {
                state = try JSONDecoder().decode(State.self, from: Data(contentsOf: stateURL))
            } catch {
                throw IAPError(.invalidConfiguration, "cannot read \(stateURL.path): \(error)")
            }
            guard state.version == 1 else {
                throw IAPError(.invalidConfiguration, "\(stateURL.path) has version \(state.version); expected 1")
            }
            guard state.bundleId == bundleId else {
                throw IAPError(
                    .invalidConfiguration,
                    "the data directory belongs to bundle id '\(state.bundleId)', not '\(bundleId)'"
                )
            }
        } else {
            state = try newState()
            do {
                try JSONEncoder().encode(state).write(to: stateURL, options: .atomic)
            } catch {
                throw IAPError(.storageFailure, "cannot write \(stateURL.path): \(error)")
            }
        }
        let journal = directory.appending(path: "journal.jsonl")
        if !manager.fileExists(atPath: journal.path) {
            guard manager.createFile(atPath: journal.path, contents: nil) else {
                throw IAPError(.storageFailure, "cannot create \(journal.path)")
            }
        }
        do {
            handle = try FileHandle(forWritingTo: journal)
            // A last line cut short by a crash is dropped, so that the next entry starts a line of its own.
            let existing = try Data(contentsOf: journal)
            if let last = existing.last, last != UInt8(ascii: "\n") {
                let keep = existing.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
                try handle.truncate(atOffset: UInt64(keep))
            }
            try handle.seekToEnd()
        } catch {
            throw IAPError(.storageFailure, "cannot open \(journal.path): \(error)")
        }
    }

    deinit {
        try? handle.close()
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
    static func state(bundleId: String, start: Date, pki: TestPKI) -> State {
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
            leafKey: text(pki.leafKey.derRepresentation)
        )
    }

    /// The entries to replay, oldest first.
    ///
    /// - Returns: The entries; a last line that does not parse (cut short by a crash) is left out.
    /// - Throws: ``IAPError`` `.invalidConfiguration` when the journal cannot be read or an earlier line is damaged.
    func entries() throws -> [Entry] {
        let data: Data
        do {
            data = try Data(contentsOf: journalURL)
        } catch {
            throw IAPError(.invalidConfiguration, "cannot read \(journalURL.path): \(error)")
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        var entries: [Entry] = []
        for (index, line) in lines.enumerated() {
            guard let entry = try? JSONDecoder().decode(Entry.self, from: Data(line)) else {
                if index == lines.count - 1 { break }
                throw IAPError(.invalidConfiguration, "line \(index + 1) of \(journalURL.path) is damaged")
            }
            entries.append(entry)
        }
        return entries
    }

    /// Appends an entry and flushes it to disk.
    ///
    /// - Parameter entry: The request that changed the store.
    /// - Throws: ``IAPError`` `.storageFailure`.
    func append(_ entry: Entry) throws {
        do {
            var line = try JSONEncoder().encode(entry)
            line.append(UInt8(ascii: "\n"))
            try handle.write(contentsOf: line)
            try handle.synchronize()
        } catch {
            throw IAPError(.storageFailure, "cannot append to \(journalURL.path): \(error)")
        }
    }
}
