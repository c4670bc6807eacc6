import Foundation
import IAPCore
import IAPStorageFile
import Testing

@Suite("JSONLinesEventSink: one event a line, for machines")
struct JSONLinesEventSinkTests {
    @Test func eventsFromManyTasksBecomeWholeLinesWithTheDocumentedKeysOnly() async throws {
        let path = FileLogStoresTests.path("events")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sink = try JSONLinesEventSink(path: path)
        let at = Date(millisecondsSince1970: 1_767_225_600_000)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    sink.record(
                        IAPEvent(
                            time: at,
                            event: "submission.delivered",
                            userId: "user-\(index)",
                            transactionId: String(2_000_000_000_000_000 + index),
                            environment: "Production",
                            outcome: "delivered",
                            message: "an operator's note that names user-\(index)",
                            durationMs: 3
                        )
                    )
                }
            }
        }
        #expect(sink.droppedEvents == 0)

        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 200)
        let objects = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(Set(objects.compactMap { $0["userId"] as? String }).count == 200)
        #expect(objects.allSatisfy { $0["time"] as? Int == 1_767_225_600_000 && $0["durationMs"] as? Int == 3 })
        // The free-text message stays with the operator's logs; unknown values are absent.
        #expect(objects.allSatisfy { $0["message"] == nil && $0["productId"] == nil && $0["errorCode"] == nil })
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aNotificationEventNamesItsTypeAndSubtype() throws {
        let event = IAPEvent(
            time: Date(millisecondsSince1970: 1_767_225_600_000),
            event: "notification.processed",
            outcome: "delivered",
            notificationType: "DID_RENEW",
            notificationSubtype: "BILLING_RECOVERY"
        )
        let path = FileLogStoresTests.path("notification-events")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try JSONLinesEventSink(path: path).record(event)
        let line = try String(contentsOfFile: path, encoding: .utf8)
        #expect(line.contains(#""notificationSubtype":"BILLING_RECOVERY","notificationType":"DID_RENEW""#), "\(line)")
    }

    @Test func aSymbolicLinkInItsPlaceIsRefused() throws {
        let target = FileLogStoresTests.path("target")
        let link = FileLogStoresTests.path("link")
        defer {
            try? FileManager.default.removeItem(atPath: link)
            try? FileManager.default.removeItem(atPath: target)
        }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let error = try #require(throws: IAPError.self) { try JSONLinesEventSink(path: link) }
        #expect(error.code == .storageFailure)
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
