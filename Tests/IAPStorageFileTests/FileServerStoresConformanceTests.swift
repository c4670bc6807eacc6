#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPConformance
import IAPServerAPI
import IAPStorageFile
import Testing

/// The file stores of reconciliation checkpoints and renewal-extension requests pass the suites every backend passes,
/// each reopened from its file as the next process would, and the file lock passes the lock suite.
@Suite("The file checkpoint, renewal-extension and lock implementations conform")
struct FileServerStoresConformanceTests {
    @Test func theFileCheckpointStoreConforms() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            // The checks run one after another: the file of the store the last one made.
            let current = LockedValue("")
            let report = await ReconciliationCheckpointStoreConformance(
                makeStore: {
                    let path = directory.file(UUID().uuidString).path
                    current.withLock { $0 = path }
                    return try FileReconciliationCheckpointStore(path: path)
                },
                reopen: { store in
                    await (store as? FileReconciliationCheckpointStore)?.close()
                    return try FileReconciliationCheckpointStore(path: current.withLock { $0 })
                }
            ).run()
            #expect(report.succeeded, "\(report)")
            #expect(report.passed == ReconciliationCheckpointStoreConformance.checkNames)
        }
    }

    @Test func theFileRenewalExtensionStoreConforms() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            // The checks run one after another: the file of the store the last one made.
            let current = LockedValue("")
            let report = await RenewalExtensionStoreConformance(
                makeStore: {
                    let path = directory.file(UUID().uuidString).path
                    current.withLock { $0 = path }
                    return try FileRenewalExtensionStore(path: path)
                },
                reopen: { store in
                    await (store as? FileRenewalExtensionStore)?.close()
                    return try FileRenewalExtensionStore(path: current.withLock { $0 })
                }
            ).run()
            #expect(report.succeeded, "\(report)")
            #expect(report.passed == RenewalExtensionStoreConformance.checkNames)
        }
    }

    @Test func theFileLockConformsAndItsFileIsPrivate() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            let report = await ExclusiveRunLockConformance { name in
                try FileExclusiveRunLock(name: name, directory: directory.path)
            }.run()
            #expect(report.succeeded, "\(report)")
            #expect(report.passed == ExclusiveRunLockConformance.checkNames)
            let lock = try FileExclusiveRunLock(name: "reconcile", directory: directory.path)
            #expect(lock.path == directory.file("reconcile.lock").path)
            let lease = try #require(try await lock.tryLock())
            let mode = try FileManager.default.attributesOfItem(atPath: lock.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            await lease.release()
        }
    }

    @Test(arguments: ["", ".hidden", "../escape", "a/b", "sp ace", String(repeating: "x", count: 65)])
    func aLockNameThatIsNotAPlainFileNameIsRefused(name: String) {
        #expect(throws: IAPError.self) { try FileExclusiveRunLock(name: name, directory: "/tmp") }
        do {
            _ = try FileExclusiveRunLock(name: name, directory: "/tmp")
        } catch let error as IAPError {
            #expect(error.code == .invalidArgument)
        } catch {
            Issue.record("threw \(error)")
        }
    }

    @Test func aLockInAMissingDirectoryFailsClearly() async throws {
        let lock = try FileExclusiveRunLock(name: "reconcile", directory: "/nonexistent-\(UUID().uuidString)")
        await #expect(throws: IAPError.self) { try await lock.tryLock() }
    }
}
