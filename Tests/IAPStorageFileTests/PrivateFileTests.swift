#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import IAPApp
import IAPCore
import IAPServerAPI
import IAPStorageFile
import Testing

/// Every file swift-iap creates is 0600 and every directory 0700 whatever the umask, and none is reached through
/// a symbolic link: a link where a store file belongs is refused, and what it points to is left untouched.
@Suite("Private files: modes whatever the umask, no link followed")
struct PrivateFileTests {
    static let auditEntry = SupportAuditEntry(
        at: Date(millisecondsSince1970: 1_767_225_600_000),
        actor: "agent-7",
        action: "lookup",
        orderId: "MK5TTTVWJH",
        userId: nil,
        outcomes: []
    )

    #if canImport(Glibc)
        /// Run in its own process: the umask belongs to the whole process.
        @Test func everythingCreatedIsPrivateUnderUmaskZero() async {
            await #expect(processExitsWith: .success) {
                await PrivateFileTests.createEverythingUnderUmaskZero()
            }
        }

        /// Exits 0 when every file created is 0600 and every directory 0700; another status names the failed step.
        static func createEverythingUnderUmaskZero() async {
            umask(0)
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("iap-private-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: base) }
            do {
                let ledger = base.appendingPathComponent("var/ledger")
                let store = try FileEntitlementStore(directory: ledger)
                try await Fixture.insert(
                    Fixture.entry("t-1", user: "user-1"),
                    signed: Fixture.signedTransaction("t-1"),
                    into: store
                )
                try await store.compact()
                try await Fixture.insert(Fixture.entry("t-2", user: "user-1"), into: store)
                await store.close()
                let outbox = FilePurchaseOutboxStorage(path: base.appendingPathComponent("app/outbox.json").path)
                try await outbox.save(Data("[]".utf8))
                let logs = base.appendingPathComponent("var/ledger")
                let checkpoints = try FileReconciliationCheckpointStore(
                    path: logs.appendingPathComponent("checkpoints.jsonl").path
                )
                try await checkpoints.saveCheckpoint(
                    .init(customerKey: "1", historyRevision: "h", refundRevision: nil, reconciledAt: Fixture.date(0))
                )
                await checkpoints.close()
                let extensions = try FileRenewalExtensionStore(
                    path: logs.appendingPathComponent("extensions.jsonl").path
                )
                await extensions.close()
                let audit = try FileSupportAuditLog(
                    path: logs.appendingPathComponent("audit.jsonl").path,
                    ledgerId: String(repeating: "a", count: 32)
                )
                try await audit.append(auditEntry)
                await audit.close()
            } catch {
                FileHandle.standardError.write(Data("creating failed: \(error)\n".utf8))
                exit(10)
            }
            var files = 0
            guard let walk = FileManager.default.enumerator(atPath: base.path) else { exit(11) }
            for case let name as String in walk {
                let path = base.appendingPathComponent(name).path
                var status = stat()
                guard lstat(path, &status) == 0 else { exit(12) }
                let mode = status.st_mode & 0o777
                let isDirectory = status.st_mode & S_IFMT == S_IFDIR
                if mode != (isDirectory ? 0o700 : 0o600) {
                    FileHandle.standardError.write(Data("\(name) has mode \(String(mode, radix: 8))\n".utf8))
                    exit(13)
                }
                files += isDirectory ? 0 : 1
            }
            // LOCK, MANIFEST, journal, snapshot, signed file, outbox, checkpoints, extensions, audit.
            guard files >= 9 else {
                FileHandle.standardError.write(Data("only \(files) files were created\n".utf8))
                exit(14)
            }
            exit(0)
        }
    #endif

    /// A store directory whose file `name` is a link to a file outside it that holds `secret`.
    private func linkedStore(_ name: String, in directory: TemporaryDirectory) async throws -> URL {
        let store = try FileEntitlementStore(directory: directory.url)
        try await Fixture.insert(
            Fixture.entry("t-1", user: "user-1"),
            signed: Fixture.signedTransaction("t-1"),
            into: store
        )
        try await store.compact()
        await store.close()
        let target = directory.url.deletingLastPathComponent().appendingPathComponent("target-\(UUID().uuidString)")
        try Data("secret\n".utf8).write(to: target)
        let link = directory.file(name)
        if FileManager.default.fileExists(atPath: link.path) {
            try FileManager.default.removeItem(at: link)
        }
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        return target
    }

    @Test(arguments: ["LOCK", "MANIFEST", "journal-2.jsonl", "snapshot-2.json", "signed-2.jsonl"])
    func aLinkWhereAStoreFileBelongsIsRefusedAndItsTargetUntouched(_ name: String) async throws {
        try await withTemporaryDirectory { directory in
            let target = try await linkedStore(name, in: directory)
            defer { try? FileManager.default.removeItem(at: target) }
            let error = try #require(throws: IAPError.self) { try FileEntitlementStore(directory: directory.url) }
            #expect(error.code == .unsafeFile, "\(error)")
            #expect(error.message.contains(name))
            #expect(try Data(contentsOf: target) == Data("secret\n".utf8))
            if name != "LOCK" {  // a read-only open and an inspection take no lock
                #expect(throws: IAPError(.unsafeFile)) {
                    try FileEntitlementStore(directory: directory.url, options: .init(access: .readOnly))
                }
                #expect(throws: IAPError(.unsafeFile)) { try FileEntitlementStore.inspect(directory: directory.url) }
            }
            #expect(try Data(contentsOf: target) == Data("secret\n".utf8))
        }
    }

    @Test func linksWhereTheOutboxAndTheLogsBelongAreRefused() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            let target = directory.file("target")
            try Data("secret\n".utf8).write(to: target)
            for name in ["outbox.json", "outbox.json.tmp", "audit.jsonl", "checkpoints.jsonl", "extensions.jsonl"] {
                try FileManager.default.createSymbolicLink(at: directory.file(name), withDestinationURL: target)
            }
            let outbox = FilePurchaseOutboxStorage(path: directory.file("outbox.json").path)
            await #expect(throws: IAPError(.unsafeFile)) { try await outbox.load() }
            await #expect(throws: IAPError(.unsafeFile)) { try await outbox.save(Data("[]".utf8)) }
            #expect(throws: IAPError(.unsafeFile)) {
                try FileSupportAuditLog(
                    path: directory.file("audit.jsonl").path,
                    ledgerId: "0123456789abcdef0123456789abcdef"
                )
            }
            #expect(throws: IAPError(.unsafeFile)) {
                try FileReconciliationCheckpointStore(path: directory.file("checkpoints.jsonl").path)
            }
            #expect(throws: IAPError(.unsafeFile)) {
                try FileRenewalExtensionStore(path: directory.file("extensions.jsonl").path)
            }
            #expect(try Data(contentsOf: target) == Data("secret\n".utf8))

            // A link left where the outbox writes its temporary file is removed, never written through.
            try FileManager.default.removeItem(at: directory.file("outbox.json"))
            try await outbox.save(Data("[1]".utf8))
            #expect(try await outbox.load() == Data("[1]".utf8))
            #expect(try Data(contentsOf: target) == Data("secret\n".utf8))
        }
    }
}
