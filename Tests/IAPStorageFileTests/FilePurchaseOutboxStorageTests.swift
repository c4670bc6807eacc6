import Foundation
import IAPApp
import IAPCore
import IAPStorageFile
import Testing

/// The app's outbox file: replaced whole on every save, readable by the next process, never half-written.
@Suite("File purchase outbox storage")
struct FilePurchaseOutboxStorageTests {
    @Test("nothing saved reads as nil; a save creates the directory and is read back by another instance")
    func roundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/nested/outbox.json"
            #expect(try await FilePurchaseOutboxStorage(path: path).load() == nil)

            try await FilePurchaseOutboxStorage(path: path).save(Data(#"{"version":1}"#.utf8))
            try await FilePurchaseOutboxStorage(path: path).save(Data(#"{"version":1,"x":2}"#.utf8))

            #expect(try await FilePurchaseOutboxStorage(path: path).load() == Data(#"{"version":1,"x":2}"#.utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/nested") == ["outbox.json"])
        }
    }

    @Test("a temporary file left by a crash during a save is ignored, and the previous outbox is intact")
    func crashDuringSave() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/outbox.json"
            let storage = FilePurchaseOutboxStorage(path: path)
            try await storage.save(Data("old".utf8))
            // A save died after writing part of its temporary file.
            try Data("ne".utf8).write(to: URL(fileURLWithPath: path + ".tmp"))

            #expect(try await storage.load() == Data("old".utf8))
            try await storage.save(Data("new".utf8))
            #expect(try await storage.load() == Data("new".utf8))
            #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        }
    }

    @Test("quarantine moves the file aside unchanged, never over an earlier one; the next load finds nothing")
    func quarantineMovesAside() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/outbox.json"
            let storage = FilePurchaseOutboxStorage(path: path)
            let when = Date(millisecondsSince1970: 1_767_225_600_000)
            try await storage.save(Data("damaged once".utf8))
            let first = try await storage.quarantine(at: when)
            #expect(first == path + ".quarantined-1767225600000")
            #expect(try await storage.load() == nil)
            #expect(try await FilePurchaseOutboxStorage(path: first).load() == Data("damaged once".utf8))

            try await storage.save(Data("damaged twice".utf8))
            let second = try await storage.quarantine(at: when)
            #expect(second == path + ".quarantined-1767225600000-2")
            #expect(try await FilePurchaseOutboxStorage(path: first).load() == Data("damaged once".utf8))
            #expect(try await FilePurchaseOutboxStorage(path: second).load() == Data("damaged twice".utf8))

            // Nothing to move: an error, and nothing changes.
            await #expect(throws: IAPError(.storageFailure)) { try await storage.quarantine(at: when) }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                    "outbox.json.quarantined-1767225600000", "outbox.json.quarantined-1767225600000-2",
                ]
            )
        }
    }

    @Test("a save that cannot be made fails with storageFailure and leaves the old file")
    func failedSave() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/outbox.json"
            let storage = FilePurchaseOutboxStorage(path: path)
            try await storage.save(Data("old".utf8))
            // The temporary file's place is taken by a directory: the save cannot create it.
            try FileManager.default.createDirectory(atPath: path + ".tmp", withIntermediateDirectories: false)

            await #expect(throws: IAPError(.storageFailure)) { try await storage.save(Data("new".utf8)) }
            #expect(try await storage.load() == Data("old".utf8))
        }
    }

    @Test("saves made at the same time never fail, and every read finds one whole saved outbox")
    func concurrentSaves() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/outbox.json"
            let payloads = (0..<8).map { Data(String(repeating: "\($0)", count: 1 + $0 * 20_000).utf8) }
            try await FilePurchaseOutboxStorage(path: path).save(payloads[0])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        let storage = FilePurchaseOutboxStorage(path: path)
                        for round in 0..<25 {
                            try await storage.save(payloads[(writer + round) % payloads.count])
                        }
                    }
                }
                group.addTask {
                    let storage = FilePurchaseOutboxStorage(path: path)
                    for _ in 0..<100 {
                        let read = try await storage.load()
                        #expect(read.map(payloads.contains) == true)
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await FilePurchaseOutboxStorage(path: path).load().map(payloads.contains) == true)
        }
    }
}
