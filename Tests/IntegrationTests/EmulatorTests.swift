#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTransportURLSession
import Testing

/// `iap emulate` driven over HTTP by the package's own App Store Server API client and `URLSessionTransport`,
/// with everything it signs checked by `AppStoreSignedDataVerifier` against the emulator's root certificate.
@Suite("iap emulate")
struct EmulatorTests {
    @Test("a purchase is served by Get Transaction Info and Look Up Order ID, signed as Apple signs")
    func purchaseAndOrderLookup() async throws {
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let client = try emulator.client()
        let verifier = try await emulator.verifier()

        let purchase = try await emulator.purchase("premium")
        let bought = try verifier.transaction(purchase.signedTransaction)
        #expect(bought.productId == "premium")
        #expect(bought.bundleId == EmulatorProcess.bundleId)

        let info = try await client.transactionInfo(transactionId: purchase.transactionId)
        let signed = try #require(info.signedTransactionInfo)
        let transaction = try verifier.transaction(signed)
        #expect(transaction.transactionId == purchase.transactionId)
        #expect(transaction.productId == "premium")

        let orderId = try #require(purchase.orderId)
        let order = try await client.lookUpOrderId(orderId)
        #expect(order.status == .valid)
        let ordered = try (order.signedTransactions ?? []).map { try verifier.transaction($0) }
        #expect(ordered.map(\.transactionId) == [purchase.transactionId])
        #expect(try await client.lookUpOrderId("MNOSUCHORD").status == .invalid)

        await #expect {
            _ = try await client.transactionInfo(transactionId: "9999999999")
        } throws: { error in
            (error as? IAPError)?.apiError == .transactionIdNotFound && (error as? IAPError)?.httpStatus == 404
        }
    }

    @Test("Look Up Order ID exists in Production only: a sandbox emulator answers it 404, as Apple's sandbox does")
    func orderLookupIsProductionOnly() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let purchase = try await emulator.purchase("premium")
        await #expect {
            _ = try await emulator.client().lookUpOrderId(try #require(purchase.orderId))
        } throws: { error in
            (error as? IAPError)?.httpStatus == 404
        }
    }

    @Test("transaction history pages 20 at a time and resumes from its revision")
    func historyPaging() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let client = try emulator.client()
        let verifier = try await emulator.verifier()
        var bought: [String] = []
        for _ in 0..<23 {
            bought.append(try await emulator.purchase("coins.100").transactionId)
        }
        let anyId = try #require(bought.last)

        let first = try await client.transactionHistoryPage(anyTransactionId: anyId)
        #expect(first.signedTransactions?.count == 20)
        #expect(first.hasMore == true)
        let second = try await client.transactionHistoryPage(anyTransactionId: anyId, revision: first.revision)
        #expect(second.signedTransactions?.count == 3)
        #expect(second.hasMore == false)

        var listed: [String] = []
        var pages = 0
        for try await page in client.transactionHistory(anyTransactionId: anyId) {
            pages += 1
            for signed in page.signedTransactions ?? [] {
                listed.append(try verifier.transaction(signed).transactionId ?? "")
            }
        }
        #expect(pages == 2)
        #expect(listed == bought)

        // Resuming from the last revision lists only what changed since: the refunded transaction.
        let refundResponse = try await emulator.post("/emulator/v1/transactions/\(bought[4])/refund")
        #expect(refundResponse.status == 200)
        let resumed = try await client.transactionHistoryPage(anyTransactionId: anyId, revision: second.revision)
        let changed = try (resumed.signedTransactions ?? []).map { try verifier.transaction($0) }
        #expect(changed.map(\.transactionId) == [bought[4]])
        #expect(changed.first?.revocationDate != nil)
    }

    @Test("subscription statuses follow a renewal, a billing failure and its recovery")
    func subscriptionStatuses() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let client = try emulator.client()
        let verifier = try await emulator.verifier()
        let purchase = try await emulator.purchase("pro.monthly")
        let original = purchase.originalTransactionId

        func current() async throws -> (status: SubscriptionStatus?, transactionId: String?) {
            let response = try await client.allSubscriptionStatuses(anyTransactionId: original)
            let item = try #require(response.data?.first?.lastTransactions?.first)
            let transaction = try verifier.transaction(try #require(item.signedTransactionInfo))
            _ = try verifier.renewalInfo(try #require(item.signedRenewalInfo))
            return (item.status, transaction.transactionId)
        }

        #expect(try await current().status == .active)
        #expect(try await emulator.subscription(original, "renew") == 200)
        let renewed = try await current()
        #expect(renewed.status == .active)
        #expect(renewed.transactionId != purchase.transactionId)

        #expect(try await emulator.subscription(original, "fail-billing") == 200)
        #expect(try await emulator.subscription(original, "renew") == 200)
        #expect(try await current().status == .billingRetry)
        let filtered = try await client.allSubscriptionStatuses(anyTransactionId: original, status: [.active])
        #expect(filtered.data?.isEmpty ?? true)

        #expect(try await emulator.subscription(original, "recover-billing") == 200)
        #expect(try await current().status == .active)

        #expect(try await emulator.subscription(original, "expire") == 200)
        #expect(try await current().status == .expired)
        #expect(try await emulator.subscription(original, "dance") == 404)
    }

    @Test("refund history lists a refunded transaction")
    func refundHistory() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let client = try emulator.client()
        let verifier = try await emulator.verifier()
        let kept = try await emulator.purchase("coins.100")
        let refunded = try await emulator.purchase("premium")

        let before = try await client.refundHistoryPage(anyTransactionId: kept.transactionId)
        #expect(before.signedTransactions?.isEmpty ?? true)
        let answer = try await emulator.post(
            "/emulator/v1/transactions/\(refunded.transactionId)/refund",
            json: #"{"reason":1}"#
        )
        #expect(answer.status == 200)

        let after = try await client.refundHistoryPage(anyTransactionId: kept.transactionId)
        let listed = try (after.signedTransactions ?? []).map { try verifier.transaction($0) }
        #expect(listed.map(\.transactionId) == [refunded.transactionId])
        #expect(listed.first?.revocationReason == .refundedDueToIssue)
        #expect(after.hasMore == false)
    }

    @Test("a token signed by another key, for another app or expired is answered 401")
    func unauthorized() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let purchase = try await emulator.purchase("premium")
        let strangers = [
            try emulator.client(key: try P256PrivateKey()),
            try emulator.client(bundleId: "com.example.other"),
        ]
        for client in strangers {
            await #expect {
                _ = try await client.transactionInfo(transactionId: purchase.transactionId)
            } throws: { error in
                (error as? IAPError)?.httpStatus == 401
            }
        }
        let noToken = try await emulator.get("/inApps/v1/transactions/\(purchase.transactionId)")
        #expect(noToken.status == 401)

        struct Claims: Encodable {
            let iss: String
            let iat: Int64
            let exp: Int64
            let aud: String
            let bid: String
        }
        let signer = JWSSigner(key: emulator.key, keyId: EmulatorProcess.keyId, type: "JWT")
        let now = Int64(SystemClock().now.timeIntervalSince1970)
        let expired = try signer.sign(
            Claims(
                iss: EmulatorProcess.issuerId,
                iat: now - 600,
                exp: now - 300,
                aud: "appstoreconnect-v1",
                bid: EmulatorProcess.bundleId
            )
        )
        let tooLong = try signer.sign(
            Claims(
                iss: EmulatorProcess.issuerId,
                iat: now,
                exp: now + 7200,
                aud: "appstoreconnect-v1",
                bid: EmulatorProcess.bundleId
            )
        )
        let valid = try signer.sign(
            Claims(
                iss: EmulatorProcess.issuerId,
                iat: now,
                exp: now + 300,
                aud: "appstoreconnect-v1",
                bid: EmulatorProcess.bundleId
            )
        )
        for (token, status) in [(expired, 401), (tooLong, 401), (valid, 200)] {
            let response = try await emulator.transport.send(
                HTTPRequest(
                    method: "GET",
                    url: emulator.baseURL.appending(path: "/inApps/v1/transactions/\(purchase.transactionId)"),
                    headers: ["Authorization": "Bearer \(token)"]
                )
            )
            #expect(response.status == status)
        }
    }

    @Test("the client retries injected 500 and 429 answers and gives up after its attempts")
    func retriesInjectedFaults() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let client = try emulator.client()
        let purchase = try await emulator.purchase("premium")

        #expect(try await emulator.post("/emulator/v1/faults", json: #"{"status":500,"count":2}"#).status == 200)
        let info = try await client.transactionInfo(transactionId: purchase.transactionId)
        #expect(info.signedTransactionInfo != nil)

        #expect(
            try await emulator.post("/emulator/v1/faults", json: #"{"status":429,"count":1,"retryAfterMillis":200}"#)
                .status == 200
        )
        let started = ContinuousClock.now
        _ = try await client.transactionInfo(transactionId: purchase.transactionId)
        #expect(ContinuousClock.now - started >= .milliseconds(150))

        #expect(try await emulator.post("/emulator/v1/faults", json: #"{"status":500,"count":4}"#).status == 200)
        await #expect {
            _ = try await client.transactionInfo(transactionId: purchase.transactionId)
        } throws: { error in
            (error as? IAPError)?.apiError == .generalInternal && (error as? IAPError)?.httpStatus == 500
        }
        // The four faults are used up: the next call succeeds at once.
        _ = try await client.transactionInfo(transactionId: purchase.transactionId)
    }

    @Test("malformed, oversized and abandoned requests are refused without harming the server")
    func survivesBadClients() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let port = try #require(emulator.baseURL.port)
        let idle = try RawConnection(port: port)  // sends nothing: must not block the others
        defer { idle.close() }
        // A request line without a single space is not HTTP: libmicrohttpd 0.9.75 closes it without an answer.
        let garbage = try RawConnection.exchange(port: port, "GARBAGE\r\n\r\n")
        #expect(garbage.isEmpty || garbage.hasPrefix("HTTP/1.1 400"))
        #expect(
            try RawConnection.exchange(port: port, "GET / HTTP/1.1\r\nBad Header\r\n\r\n").hasPrefix("HTTP/1.1 400")
        )
        let huge = "GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 20_000) + "\r\n\r\n"
        #expect(try RawConnection.exchange(port: port, huge).hasPrefix("HTTP/1.1 431"))
        let tooLarge = "POST /emulator/v1/purchases HTTP/1.1\r\nContent-Length: 5000000\r\n\r\n"
        #expect(try RawConnection.exchange(port: port, tooLarge).hasPrefix("HTTP/1.1 413"))
        let badJSON =
            "POST /emulator/v1/purchases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Emulator-Control-Token: \(emulator.controlToken)\r\nContent-Length: 3\r\n\r\n{x}"
        #expect(try RawConnection.exchange(port: port, badJSON).hasPrefix("HTTP/1.1 400"))

        async let purchases = withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { try await emulator.purchase("coins.100").transactionId }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(try await purchases.count == 8)
        #expect(emulator.isRunning)
    }

    @Test("a test notification is retried while the app's server does not answer, and its status says so")
    func testNotificationRetries() async throws {
        // Port 9 (discard) on loopback: nothing listens, every attempt fails at once.
        let emulator = try await EmulatorProcess.start(extraArguments: [
            "--notify-url", "http://127.0.0.1:9/notifications",
        ])
        defer { emulator.stop() }
        let client = try emulator.client()
        let token = try #require(try await client.requestTestNotification().testNotificationToken)
        var attempts: [SendAttemptItem] = []
        for _ in 0..<50 where attempts.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
            attempts = try await client.testNotificationStatus(testNotificationToken: token).sendAttempts ?? []
        }
        #expect(attempts.count >= 2)
        #expect(attempts.allSatisfy { $0.sendAttemptResult != .success })
        let status = try await client.testNotificationStatus(testNotificationToken: token)
        let notification = try await emulator.verifier().notification(try #require(status.signedPayload))
        #expect(notification.payload.notificationType == .test)

        let withoutURL = try await EmulatorProcess.start()
        defer { withoutURL.stop() }
        await #expect {
            _ = try await withoutURL.client().requestTestNotification()
        } throws: { error in
            (error as? IAPError)?.apiError == .serverNotificationUrlNotFound
        }
    }

    @Test("a consumption request is answered from the ledger and the emulator takes the answer as Apple does")
    func consumptionRequestAnswered() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let client = try emulator.client()
        let verifier = try await emulator.verifier()
        let ledger = InMemoryEntitlementStore()
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100)
        ])
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: ledger,
            hook: RecordingFulfillmentHook()
        )
        let processor = NotificationProcessor(
            pipeline: pipeline,
            consumptionRequests: LedgerConsumptionResponder(store: ledger, clients: AppStoreServerAPIClients(client)) {
                _ in ConsumptionFacts(customerConsented: true, unitsUsed: 100)
            }
        )
        let purchase = try await emulator.purchase("coins.100")
        _ = await pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")

        let asked = try await emulator.post(
            "/emulator/v1/transactions/\(purchase.transactionId)/consumption-request",
            json: #"{"reason":"UNSATISFIED_WITH_PURCHASE"}"#
        )
        #expect(asked.status == 200)
        struct Notification: Decodable {
            let notificationType: String
            let signedPayload: String
        }
        let listed = try JSONDecoder().decode(
            [Notification].self,
            from: try await emulator.get("/emulator/v1/notifications").body
        )
        let request = try #require(listed.last { $0.notificationType == "CONSUMPTION_REQUEST" })
        let response = await processor.handle(body: try JSONEncoder().encode(["signedPayload": request.signedPayload]))
        #expect(response.status == 200)

        let answers = try JSONDecoder().decode(
            [ConsumptionRequest].self,
            from: try await emulator.get("/emulator/v1/transactions/\(purchase.transactionId)/consumption").body
        )
        #expect(answers.count == 1)
        #expect(answers.first?.deliveryStatus == .delivered)
        #expect(answers.first?.consumptionPercentage == 100_000)
        #expect(answers.first?.customerConsented == true)
    }

    @Test("with --data, a restarted emulator keeps its transactions, clock and root certificate")
    func restartKeepsState() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-emulate-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["--data", directory.appending(path: "store").path]
        let key = try P256PrivateKey()

        let first = try await EmulatorProcess.start(extraArguments: arguments, key: key, directory: directory)
        let purchase: EmulatorProcess.Purchase
        let extended: ExtendRenewalDateResponse
        let root: Data
        let advanced: HTTPResponse
        do {
            defer { first.stop() }
            purchase = try await first.purchase("pro.monthly")
            _ = try await first.purchase("coins.100")
            // Set App Account Token is a change too: journaled, and replayed.
            try await first.client().setAppAccountToken(
                originalTransactionId: purchase.transactionId,
                appAccountToken: try #require(UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
            )
            // So is a renewal-date extension.
            extended = try await first.client().extendSubscriptionRenewalDate(
                originalTransactionId: purchase.transactionId,
                ExtendRenewalDateRequest(
                    extendByDays: 10,
                    extendReasonCode: .customerSatisfaction,
                    requestIdentifier: "restart-test"
                )
            )
            // And one for every active subscriber of the product.
            _ = try await first.client().extendRenewalDateForAllActiveSubscribers(
                MassExtendRenewalDateRequest(
                    extendByDays: 3,
                    extendReasonCode: .other,
                    requestIdentifier: "restart-mass",
                    productId: "pro.monthly"
                )
            )
            // A refused change is not journaled: it changed nothing.
            let refused = try await first.post("/emulator/v1/purchases", json: #"{"productId":"nope"}"#)
            #expect(refused.status == 400)
            advanced = try await first.post("/emulator/v1/clock/advance", json: #"{"seconds":3600}"#)
            root = try await first.get("/emulator/v1/root-certificate").body
        }
        #expect(advanced.status == 200)

        let second = try await EmulatorProcess.start(extraArguments: arguments, key: key, directory: directory)
        defer { second.stop() }
        #expect(try await second.get("/emulator/v1/root-certificate").body == root)
        #expect(try await second.get("/emulator/v1/clock").body == advanced.body)
        let verifier = try await second.verifier()
        let info = try await second.client().transactionInfo(transactionId: purchase.transactionId)
        let kept = try verifier.transaction(try #require(info.signedTransactionInfo))
        #expect(kept.productId == "pro.monthly")
        #expect(kept.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(extended.success == true)
        #expect(kept.expiresDate == extended.effectiveDate?.addingTimeInterval(3 * 86_400))
        let mass = try await second.client().statusOfSubscriptionRenewalDateExtensions(
            productId: "pro.monthly",
            requestIdentifier: "restart-mass"
        )
        #expect(mass.complete == true && mass.succeededCount == 1)
        // Ids continue where the first run stopped.
        let next = try await second.purchase("coins.100")
        #expect(next.transactionId != purchase.transactionId)
        let history = try await second.client().transactionHistoryPage(anyTransactionId: next.transactionId)
        #expect(history.signedTransactions?.count == 3)
    }
}

/// A raw TCP connection to the emulator, for requests no HTTP client would send.
final class RawConnection {
    private var descriptor: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw IAPError(.transportFailure, "cannot connect to 127.0.0.1:\(port)") }
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func close() {
        if descriptor >= 0 {
            #if canImport(Glibc)
                _ = Glibc.close(descriptor)
            #else
                _ = Darwin.close(descriptor)
            #endif
            descriptor = -1
        }
    }

    /// Sends `text` without waiting for an answer.
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends `text` and reads until the server closes the connection.
    static func exchange(port: Int, _ text: String) throws -> String {
        let connection = try RawConnection(port: port)
        defer { connection.close() }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer.append(contentsOf: buffer[..<count])
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
