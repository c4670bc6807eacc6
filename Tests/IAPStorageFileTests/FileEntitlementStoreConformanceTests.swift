#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPConformance
import IAPStorageFile
import Testing

@Suite struct FileEntitlementStoreConformanceTests {
    /// Every store the suite made, so they can be closed and their directories removed.
    final class Opened: Sendable {
        let stores = LockedValue<[(FileEntitlementStore, TemporaryDirectory)]>([])

        func make(_ options: FileEntitlementStore.Options) throws -> FileEntitlementStore {
            let directory = TemporaryDirectory()
            let store = try FileEntitlementStore(directory: directory.url, options: options)
            stores.withLock { $0.append((store, directory)) }
            return store
        }

        func closeAll() async {
            for (store, directory) in stores.withLock({ $0 }) {
                await store.close()
                directory.remove()
            }
        }
    }

    @Test func passesTheConformanceSuiteWithFsync() async {
        let opened = Opened()
        let report = await EntitlementStoreConformance { try opened.make(.init()) }.run()
        await opened.closeAll()
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.passed.count == EntitlementStoreConformance.checkNames.count)
    }

    @Test func passesTheConformanceSuiteWhileCompactingConstantly() async {
        let opened = Opened()
        // A threshold of one byte compacts after every flush, so the suite runs across journal switches.
        let report = await EntitlementStoreConformance {
            try opened.make(.init(compactionThreshold: 1, fsync: false))
        }.run()
        await opened.closeAll()
        #expect(report.failures.isEmpty, "\(report)")
    }
}
