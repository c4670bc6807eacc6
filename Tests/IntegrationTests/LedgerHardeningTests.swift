#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import Testing

/// `iap ledger` against a damaged, emptied or forged ledger, and on a full disk: check changes nothing and tells the
/// truth, repair keeps what verifies, read-only commands create nothing, and ingest never rejects what it recorded.
@Suite("iap ledger: honest check, repair, read-only commands, re-verification, truthful ingest")
struct LedgerHardeningTests {
    typealias CLI = CommandLineContractTests

    /// A directory with `count` signed test transactions, their root and catalog, ingested into `ledger`.
    struct Ledger {
        let directory: URL
        var root: String { directory.appending(path: "root.der").path }
        var catalog: String { directory.appending(path: "catalog.json").path }
        var data: String { directory.appending(path: "ledger").path }
        var journal: URL { directory.appending(path: "ledger/journal-1.jsonl") }
        var tokens: [String] = []

        init(count: Int, ingest: Bool = true) async throws {
            directory = FileManager.default.temporaryDirectory.appending(path: "iap-hardening-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let generated = try await CLI.iap([
                "testdata", "transactions", "--count", "\(count)", "--root-out", root, "--catalog-out", catalog,
            ])
            tokens = generated.stdoutLines
            if ingest {
                // One line at a time: the tests find records by where input order puts them in the journal.
                let ingested = try await CLI.iap(
                    [
                        "ledger", "ingest", "--data", data, "--catalog", catalog, "--root", root, "--ledger-only",
                        "--token-is-user",
                        "--window", "1",
                    ],
                    input: Data((tokens.joined(separator: "\n") + "\n").utf8)
                )
                #expect(ingested.status == 0, "\(ingested.stderr)")
            }
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }

        func journalBytes() throws -> [UInt8] {
            Array(try Data(contentsOf: journal))
        }

        func check(_ extra: [String] = []) async throws -> CLI.Run {
            try await CLI.iap(["ledger", "check", "--data", data] + extra)
        }
    }

    @Test func checkChangesNothingAndSaysWhatAnOpenWouldDo() async throws {
        let ledger = try await Ledger(count: 3)
        defer { ledger.remove() }
        let torn = try ledger.journalBytes() + Array("{\"v\":2,\"seq\":10,\"crc\":\"0".utf8)
        try Data(torn).write(to: ledger.journal)
        let before = try FileManager.default.contentsOfDirectory(atPath: ledger.data).sorted()

        let check = try await ledger.check()
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stdoutLines.contains { $0.hasPrefix("note: journal-1.jsonl") && $0.contains("an open cuts them") }
        )
        #expect(
            check.stdoutLines.contains { $0.hasPrefix("open: would cut a torn record at the end of journal-1.jsonl") }
        )
        #expect(check.stdoutLines.last?.hasPrefix("ok: ") == true)
        #expect(try ledger.journalBytes() == torn)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ledger.data).sorted() == before)
    }

    @Test func aChangedSeqIsAnErrorNamingFileAndLineAndRepairDropsOnlyThatRecord() async throws {
        let ledger = try await Ledger(count: 3)
        defer { ledger.remove() }
        var bytes = try ledger.journalBytes()
        let lastLine = (bytes[..<(bytes.count - 1)].lastIndex(of: UInt8(ascii: "\n")) ?? 0) + 1
        let seq = try #require(bytes[lastLine...].firstRange(of: Array("\"seq\":".utf8))).upperBound
        bytes[seq] = UInt8(ascii: "x")
        try Data(bytes).write(to: ledger.journal)

        let check = try await ledger.check()
        #expect(check.status == 1)
        #expect(
            check.stderrLines.contains {
                // Line 1 is the journal's header, line 2 the certificate chain the signed transactions share.
                $0.hasPrefix("error: storageCorrupted: journal-1.jsonl line 8 (byte \(lastLine))")
            }
        )
        #expect(check.stdoutLines.contains { $0.hasPrefix("open: refuses this ledger") })
        let stats = try await CLI.iap(["ledger", "stats", "--data", ledger.data])
        #expect(stats.status == 1)
        #expect(stats.stderr.contains("storageCorrupted"))
        #expect(try ledger.journalBytes() == bytes)

        let repair = try await CLI.iap(["ledger", "repair", ledger.data])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdoutLines.contains { $0.hasPrefix("dropped: journal-1.jsonl line 8") })
        #expect(
            repair.stdoutLines.contains { $0.hasPrefix("repaired: 3 entries kept (3 with their signed transaction)") }
        )
        let aside = try #require(
            try FileManager.default.contentsOfDirectory(atPath: ledger.data).first { $0.hasPrefix("damaged-") }
        )
        #expect(
            Array(try Data(contentsOf: URL(filePath: ledger.data).appending(path: "\(aside)/journal-1.jsonl"))) == bytes
        )
        await #expect(try ledger.check(["--reverify", "--root", ledger.root]).status == 0)
        #expect(try await CLI.iap(["ledger", "repair", "--help"]).status == 0)
    }

    @Test func anEmptiedOrDeletedJournalFailsTheCheck() async throws {
        let ledger = try await Ledger(count: 3)
        defer { ledger.remove() }
        try Data().write(to: ledger.journal)
        let emptied = try await ledger.check()
        #expect(emptied.status == 1)
        #expect(emptied.stderr.contains("recorded writes are lost"))
        try FileManager.default.removeItem(at: ledger.journal)
        let deleted = try await ledger.check(["--json"])
        #expect(deleted.status == 1)
        let document = try CLI.json(deleted.stdout)
        #expect(document["ok"] as? Bool == false)
        #expect((document["problems"] as? [String])?.contains { $0.contains("the journal is missing") } == true)
        #expect(!FileManager.default.fileExists(atPath: ledger.journal.path))
    }

    @Test func commandsThatReadNeverCreateALedger() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in [
            ["export"], ["stats"], ["history", "--user", "alice"], ["entitlements", "--user", "alice"], ["check"],
        ] {
            let run = try await CLI.iap(["ledger"] + command + ["--data", directory.path])
            #expect(run.status == 1, "\(command)")
            #expect(run.stderr.hasPrefix("error: notFound: "), "\(command): \(run.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "\(command)")
        }
    }

    @Test(arguments: [false, true])
    func aRecordAppendedWithARecomputedChecksumIsCaughtByReverification(keepingAnotherJWS: Bool) async throws {
        let ledger = try await Ledger(count: 3)
        defer { ledger.remove() }
        // A forged insert: transaction 3's record under a new id and sequence, its checksum recomputed.
        let bytes = try ledger.journalBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        let insert = try #require(lines.last { $0.contains("\"op\":{\"insert\"") })
        var op = String(insert[try #require(insert.range(of: "\"op\":")).upperBound...].dropLast())
        op = op.replacingOccurrences(of: "2000000000000003", with: "2000000000009999")
            .replacingOccurrences(of: "\"sequence\":3", with: "\"sequence\":4")
        if !keepingAnotherJWS, let signed = op.range(of: ",\"signedTransaction\":") {
            op = String(op[..<signed.lowerBound]) + "}"
        }
        // The next record number, and the format version the copied record was written with.
        let last = try #require(lines.last)
        let lastSeq = try #require(
            last.firstRange(of: "\"seq\":").map { Int(last[$0.upperBound...].prefix { $0.isNumber }) }
        )
        let version = try #require(
            insert.firstRange(of: "{\"v\":").map { insert[$0.upperBound...].prefix { $0.isNumber } }
        )
        let seq = try #require(lastSeq) + 1
        let forged = "{\"v\":\(version),\"seq\":\(seq),\"crc\":\"\(Self.crc32c(Array(op.utf8)))\",\"op\":\(op)}\n"
        try Data(bytes + Array(forged.utf8)).write(to: ledger.journal)

        // Appended after the last watermark, it looks like any record written since: the plain check opens it.
        let plain = try await ledger.check()
        #expect(plain.status == 0, "\(plain.stderr)")
        let stats = try CLI.json(try await CLI.iap(["ledger", "stats", "--data", ledger.data, "--json"]).stdout)
        #expect(stats["transactions"] as? Int == 4)
        // Verifying every entry's signed transaction again finds it.
        let reverified = try await ledger.check(["--reverify", "--root", ledger.root])
        #expect(reverified.status == 1)
        let problem = try #require(reverified.stderrLines.first { $0.contains("2000000000009999") })
        #expect(
            problem.contains(
                keepingAnotherJWS ? "differs from its signed transaction in" : "recorded without its signed"
            )
        )
        #expect(reverified.stdoutLines.contains { $0.hasPrefix("reverify: 3 signed transactions verify") })
    }

    #if canImport(Glibc)
        /// On a full disk, a transaction whose insert was durable is acknowledged with the state it is in, never
        /// rejected: a later run delivers it. Run in its own process: the file size limit is the whole process's.
        @Test func aLineRecordedBeforeTheDiskFilledIsAcknowledgedPending() async throws {
            let ledger = try await Ledger(count: 1, ingest: false)
            defer { ledger.remove() }
            // How long the journal is once the insert is durable, from a run with room.
            let probe = ledger.directory.appending(path: "probe").path
            let input = Data((ledger.tokens[0] + "\n").utf8)
            _ = try await CLI.iap(
                [
                    "ledger", "ingest", "--data", probe, "--catalog", ledger.catalog, "--root", ledger.root,
                    "--ledger-only", "--token-is-user",
                ],
                input: input
            )
            let lines = try Data(contentsOf: URL(filePath: probe).appending(path: "journal-1.jsonl"))
                .split(separator: UInt8(ascii: "\n")).map(\.count)
            // The journal's header, the certificate chain, the insert (already claimed), delivered.
            #expect(lines.count == 4)
            let limit = lines[0] + 1 + lines[1] + 1 + lines[2] + 1 + lines[3] / 2
            let data = ledger.data
            let catalog = ledger.catalog
            let root = ledger.root
            let token = ledger.tokens[0]
            await #expect(processExitsWith: .success) {
                [
                    limit = limit as Int, data = data as String, catalog = catalog as String, root = root as String,
                    token = token as String
                ] in
                signal(SIGXFSZ, SIG_IGN)  // a write past the limit fails with EFBIG instead of killing the process
                var bound = rlimit()
                getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &bound)
                bound.rlim_cur = rlim_t(limit)
                guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &bound) == 0 else { exit(10) }
                guard
                    let run = try? await CLI.iap(
                        [
                            "ledger", "ingest", "--data", data, "--catalog", catalog, "--root", root, "--ledger-only",
                            "--token-is-user",
                        ],
                        input: Data((token + "\n").utf8)
                    )
                else { exit(11) }
                guard run.stdoutLines == ["ACK 2000000000000001 pending"] else {
                    FileHandle.standardError.write(Data("stdout: \(run.stdout)\nstderr: \(run.stderr)\n".utf8))
                    exit(12)
                }
                guard run.status == 1, run.stderr.contains("storageFailure") else { exit(13) }
                exit(0)
            }
            // With room again, the next run delivers what was recorded, once, through a wallet that checks each
            // signature.
            let secret = "a-shared-secret-of-32-bytes-long"
            let secretFile = ledger.directory.appending(path: "grant-secret")
            try Data((secret + "\n").utf8).write(to: secretFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
            let wallet = try LoopbackServer.wallet(secret: secret)
            defer { wallet.stop() }
            let again = try await CLI.iap(
                [
                    "ledger", "ingest", "--data", data, "--root", root, "--grant-url",
                    wallet.url.appending(path: "iap").absoluteString, "--grant-secret-file", secretFile.path,
                ],
                input: Data((token + "\n").utf8)
            )
            #expect(again.stdoutLines == ["ACK 2000000000000001 alreadyDelivered"], "\(again.stderr)")
            #expect(wallet.requests.compactMap { $0.headers["idempotency-key"] } == ["2000000000000001"])
        }
    #endif

    /// CRC-32C of `bytes`, as eight lowercase hex digits: what a forger recomputes.
    static func crc32c(_ bytes: [UInt8]) -> String {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
        }
        let value = crc ^ 0xFFFF_FFFF
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}
