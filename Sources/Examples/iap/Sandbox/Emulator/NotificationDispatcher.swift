import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI
import IAPTesting

/// Posts the emulator's App Store Server Notifications V2 to the app's server, in order, as Apple does, and keeps
/// the record of every notification and send attempt.
///
/// Each notification is posted as `{"signedPayload": "..."}` with `Content-Type: application/json`. An answer other
/// than 2xx, a timeout or a connection failure is retried after 0.5, 1, 2 and 4 seconds (Apple retries over days;
/// a test tool must not); after ``maximumAttempts`` it is given up. The attempts are what Get Test Notification
/// Status and Get Notification History report.
actor NotificationDispatcher {
    /// One notification and its send attempts.
    struct Record: Sendable {
        var notificationUUID: String
        var notificationType: String
        var subtype: String?
        var signedDate: Date?
        var signedPayload: String
        /// The transaction ids the notification names: its transaction's id and original id.
        var transactionIds: Set<String>
        var sendAttempts: [SendAttemptItem] = []
    }

    /// Attempts per notification, the first included.
    static let maximumAttempts = 5

    /// The waits between attempts: 0.5, 1, 2 and 4 seconds, without jitter, so that a test knows when to look.
    static let backoff = RetryPolicy(
        initialDelay: .milliseconds(500),
        multiplier: 2,
        maximumDelay: .seconds(4),
        maximumAttempts: maximumAttempts,
        jitter: 0
    )

    /// Where notifications go, or `nil` to only record them.
    let url: URL?
    private let transport: any Transport
    private let clock: any WallClock
    private var records: [Record] = []
    private var indexByUUID: [String: Int] = [:]
    private var pending: [Int] = []
    private var worker: Task<Void, Never>?

    /// Creates a dispatcher.
    ///
    /// - Parameters:
    ///   - url: Where to post, or `nil`.
    ///   - transport: How to post.
    ///   - clock: The emulator's clock, for attempt dates.
    init(url: URL?, transport: any Transport, clock: any WallClock) {
        self.url = url
        self.transport = transport
        self.clock = clock
    }

    /// Records signed notifications and, with a URL and `deliver`, queues them for posting.
    ///
    /// - Parameters:
    ///   - signedPayloads: The notifications, oldest first.
    ///   - deliver: `false` for notifications a replayed journal made again, which were delivered before.
    func enqueue(_ signedPayloads: [String], deliver: Bool = true) {
        for signedPayload in signedPayloads {
            let record = Self.record(of: signedPayload)
            indexByUUID[record.notificationUUID] = records.count
            records.append(record)
            if deliver, url != nil {
                pending.append(records.count - 1)
            }
        }
        if worker == nil, !pending.isEmpty {
            worker = Task { await self.drain() }
        }
    }

    /// The notification with a UUID.
    func record(notificationUUID: String) -> Record? {
        indexByUUID[notificationUUID].map { records[$0] }
    }

    /// Every notification, oldest first.
    func allRecords() -> [Record] {
        records
    }

    /// Whether every queued notification has been delivered or given up.
    var isIdle: Bool {
        pending.isEmpty && worker == nil
    }

    private func drain() async {
        while let index = pending.first {
            await deliver(index)
            pending.removeFirst()
        }
        worker = nil
    }

    private func deliver(_ index: Int) async {
        guard let url else { return }
        let body = (try? JSONEncoder().encode(["signedPayload": records[index].signedPayload])) ?? Data()
        for attempt in 1...Self.maximumAttempts {
            let result = await post(body, to: url)
            records[index].sendAttempts.append(SendAttemptItem(attemptDate: clock.now, sendAttemptResult: result))
            if result == .success { return }
            let record = records[index]
            Output.error(
                "note: notification \(record.notificationUUID) (\(record.notificationType)) attempt \(attempt) "
                    + "failed: \(result.rawValue)"
            )
            guard attempt < Self.maximumAttempts else { break }
            try? await Task.sleep(for: .seconds(Self.backoff.delay(afterAttempts: attempt)))
        }
    }

    private func post(_ body: Data, to url: URL) async -> SendAttemptResult {
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: ["Content-Type": "application/json", "User-Agent": "iap-emulate"],
            body: body,
            timeout: .seconds(5)
        )
        do {
            let response = try await transport.send(request)
            return (200...299).contains(response.status) ? .success : .unsuccessfulHttpResponseCode
        } catch let error as IAPError where error.code == .timeout {
            return .timedOut
        } catch {
            return .noResponse
        }
    }

    /// Reads what the record needs from a notification this emulator signed (so its signature is not checked).
    private static func record(of signedPayload: String) -> Record {
        let payload = try? AppStoreJSON.makeDecoder().decode(
            NotificationPayload.self,
            from: EmulatorJWS.payload(of: signedPayload) ?? Data()
        )
        var transactionIds: Set<String> = []
        if let signedTransaction = payload?.data?.signedTransactionInfo,
            let bytes = EmulatorJWS.payload(of: signedTransaction),
            let transaction = try? AppStoreJSON.makeDecoder().decode(TransactionPayload.self, from: bytes)
        {
            transactionIds.formUnion([transaction.transactionId, transaction.originalTransactionId].compactMap { $0 })
        }
        return Record(
            notificationUUID: payload?.notificationUUID ?? UUID().uuidString.lowercased(),
            notificationType: payload?.notificationType?.rawValue ?? "",
            subtype: payload?.subtype?.rawValue,
            signedDate: payload?.signedDate,
            signedPayload: signedPayload,
            transactionIds: transactionIds
        )
    }
}
