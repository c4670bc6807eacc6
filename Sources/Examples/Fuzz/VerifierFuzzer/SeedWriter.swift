#if !FUZZING
    import Foundation
    import IAPCore
    import IAPCrypto

    /// Mints the generated part of the seed corpus with a fresh TestPKI.
    ///
    /// Writes valid tokens of every kind (signed by the new PKI), their payloads as plain JSON (the fuzz entry signs
    /// inputs that start with `{`), tokens that fail one check each, and malformed inputs. Prints the new root
    /// certificate, which goes into `SeedRoot.swift` so that the fuzzer trusts the minted chain.
    enum SeedWriter {
        /// 2025-05-01T00:00:00Z in milliseconds, inside the PKI's validity and before the fuzzer's "now".
        static let signedDate = 1_746_057_600_000

        static func write(to directory: String) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let pki = try FuzzFixture.generatePKI()
            let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
            var written = 0
            func save(_ name: String, bytes: [UInt8]) throws {
                try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
                written += 1
            }
            func save(_ name: String, _ text: String) throws {
                try save(name, bytes: Array(text.utf8))
            }
            func sign(_ json: String) throws -> String {
                try signer.sign(payload: Data(json.utf8))
            }

            let transaction = Payloads.transaction(environment: "Sandbox")
            let renewal = Payloads.renewal(environment: "Sandbox")
            let appTransaction = Payloads.appTransaction(receiptType: "Sandbox")
            let signedTransaction = try sign(transaction)
            let signedRenewal = try sign(renewal)
            let signedAppTransaction = try sign(appTransaction)
            let notifications = [
                ("notification-renew", Payloads.notification(signedTransaction, signedRenewal)),
                ("notification-app-data", Payloads.notificationWithAppData(signedAppTransaction)),
                ("notification-summary", Payloads.summary),
                ("notification-external-token", Payloads.externalPurchaseToken),
                ("notification-test-production", Payloads.testNotification),
            ]
            let payloads =
                [
                    ("transaction", transaction),
                    ("transaction-xcode", Payloads.transaction(environment: "Xcode")),
                    ("transaction-production", Payloads.transaction(environment: "Production")),
                    ("renewal", renewal),
                    ("app-transaction", appTransaction),
                ] + notifications
            for (name, json) in payloads {
                try save("payload-\(name).json", json)
                try save("token-\(name).jws", try sign(json))
            }
            // A key twice: at the top, deep inside, equal only once escapes are read, inside a notification's data.
            let duplicates = [
                ("duplicate-bundle-id", "{\"bundleId\":\"com.attacker.app\"," + transaction.dropFirst()),
                ("duplicate-deep", "{\"futureField\":{\"a\":[{\"b\":1,\"b\":2}]}," + transaction.dropFirst()),
                ("duplicate-escaped", "{\"bundle\\u0049d\":\"com.attacker.app\"," + transaction.dropFirst()),
                (
                    "duplicate-notification-data",
                    Payloads.testNotification.replacingOccurrences(
                        of: "\"data\":{",
                        with: "\"data\":{\"bundleId\":\"x\","
                    )
                ),
            ]
            for (name, json) in duplicates {
                try save("payload-\(name).json", json)
            }

            // Xcode's shape: one certificate and kid Apple_Xcode_Key.
            let xcodeSigner = JWSSigner(
                key: pki.leafKey,
                keyId: "Apple_Xcode_Key",
                certificateChain: [Data(pki.leaf.derBytes).base64EncodedString()]
            )
            try save(
                "token-xcode-shape.jws",
                try xcodeSigner.sign(payload: Data(Payloads.transaction(environment: "Xcode").utf8))
            )
            // Two certificates; and the chain in the wrong order.
            let x5c = pki.x5c
            try save(
                "token-two-certificates.jws",
                try JWSSigner(key: pki.leafKey, certificateChain: Array(x5c.prefix(2))).sign(
                    payload: Data(transaction.utf8)
                )
            )
            try save(
                "token-swapped-chain.jws",
                try JWSSigner(key: pki.leafKey, certificateChain: [x5c[1], x5c[0], x5c[2]]).sign(
                    payload: Data(transaction.utf8)
                )
            )
            // Signed by the intermediate's key rather than the leaf's.
            try save(
                "token-wrong-key.jws",
                try JWSSigner(key: pki.intermediateKey, certificateChain: x5c).sign(payload: Data(transaction.utf8))
            )
            // Headers the parser must refuse, each correctly signed.
            let chain = x5c.map { "\"\($0)\"" }.joined(separator: ",")
            let headers = [
                ("alg-none", #"{"alg":"none","x5c":[\#(chain)]}"#),
                ("alg-twice", #"{"alg":"ES256","alg":"none","x5c":[\#(chain)]}"#),
                ("crit", #"{"alg":"ES256","crit":["exp"],"x5c":[\#(chain)]}"#),
                ("no-x5c", #"{"alg":"ES256"}"#),
                ("header-array", #"[{"alg":"ES256"}]"#),
                ("x5c-url-alphabet", #"{"alg":"ES256","x5c":["\#(x5c[0].replacingOccurrences(of: "+", with: "-"))"]}"#),
            ]
            for (name, header) in headers {
                let input = Base64.encodeURL(header.utf8) + "." + Base64.encodeURL(transaction.utf8)
                let signature = try pki.leafKey.signature(for: Array(input.utf8))
                try save("token-\(name).jws", input + "." + Base64.encodeURL(signature))
            }
            // Malformed shapes.
            let valid = signedTransaction
            let malformed = [
                ("two-segments", String(valid.prefix { $0 != "." }) + ".e30"),
                ("four-segments", valid + ".AAAA"),
                ("padded-signature", valid + "=="),
                ("whitespace", " " + valid + "\n"),
                ("payload-not-object", valid.split(separator: ".")[0] + ".WzFd." + valid.split(separator: ".")[2]),
                ("empty-segments", ".."),
            ]
            for (name, text) in malformed {
                try save("malformed-\(name).txt", text)
            }
            try save("der-root.der", bytes: pki.root.derBytes)
            print("wrote \(written) seeds to \(directory)")
            print("seed root (put this in SeedRoot.swift):")
            print(Data(pki.root.derBytes).base64EncodedString())
        }

        /// Payloads in Apple's JSON shapes, with dates in milliseconds.
        enum Payloads {
            static func transaction(environment: String) -> String {
                """
                {"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","appTransactionId":"704289572311181848",\
                "bundleId":"com.example.app","currency":"USD","environment":"\(environment)",\
                "expiresDate":1748736000000,"inAppOwnershipType":"PURCHASED","originalPurchaseDate":1746057600000,\
                "originalTransactionId":"2000000812345678","price":9990,"productId":"com.example.app.monthly",\
                "purchaseDate":1746057600000,"quantity":1,"signedDate":\(signedDate),"storefront":"USA",\
                "storefrontId":"143441","subscriptionGroupIdentifier":"21345678","transactionId":"2000000812345679",\
                "transactionReason":"PURCHASE","type":"Auto-Renewable Subscription",\
                "webOrderLineItemId":"2000000098765432","offerType":2,"offerDiscountType":"PAY_AS_YOU_GO",\
                "revocationDate":1746057600001,"revocationReason":1}
                """
            }

            static func renewal(environment: String) -> String {
                """
                {"autoRenewProductId":"com.example.app.monthly","autoRenewStatus":1,"currency":"USD",\
                "eligibleWinBackOfferIds":["winback1"],"environment":"\(environment)","expirationIntent":2,\
                "gracePeriodExpiresDate":1748736000000,"isInBillingRetryPeriod":false,\
                "originalTransactionId":"2000000812345678","priceIncreaseStatus":1,"productId":"com.example.app.monthly",\
                "recentSubscriptionStartDate":1746057600000,"renewalDate":1748736000000,"renewalPrice":9990,\
                "signedDate":\(signedDate),"offerType":3,"offerIdentifier":"code1","offerPeriod":"P1M"}
                """
            }

            static func appTransaction(receiptType: String) -> String {
                """
                {"appAppleId":1234567890,"appTransactionId":"704289572311181848","applicationVersion":"2",\
                "bundleId":"com.example.app","deviceVerification":"AAAA","deviceVerificationNonce":\
                "7e3fb20b-4cdb-47cc-936d-99d65f608138","originalApplicationVersion":"1",\
                "originalPlatform":"iOS","originalPurchaseDate":1746057600000,"preorderDate":1746057600000,\
                "receiptCreationDate":\(signedDate),"receiptType":"\(receiptType)","versionExternalIdentifier":1}
                """
            }

            static func notification(_ signedTransaction: String, _ signedRenewal: String) -> String {
                """
                {"notificationType":"DID_RENEW","subtype":"BILLING_RECOVERY",\
                "notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20","version":"2.0","signedDate":\(signedDate),\
                "data":{"appAppleId":1234567890,"bundleId":"com.example.app","bundleVersion":"2",\
                "environment":"Sandbox","status":1,"signedTransactionInfo":"\(signedTransaction)",\
                "signedRenewalInfo":"\(signedRenewal)"}}
                """
            }

            static func notificationWithAppData(_ signedAppTransaction: String) -> String {
                """
                {"notificationType":"RESCIND_CONSENT","notificationUUID":"102e14d5-51f5-4503-b5a8-c3a1af68eb20",\
                "version":"2.0","signedDate":\(signedDate),"appData":{"appAppleId":1234567890,\
                "bundleId":"com.example.app","environment":"Sandbox",\
                "signedAppTransactionInfo":"\(signedAppTransaction)"}}
                """
            }

            static let summary = """
                {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY",\
                "notificationUUID":"202e14d5-51f5-4503-b5a8-c3a1af68eb20","version":"2.0","signedDate":\(signedDate),\
                "summary":{"requestIdentifier":"efb27071-45a4-4aca-9854-2a1e9146f265","environment":"Sandbox",\
                "appAppleId":1234567890,"bundleId":"com.example.app","productId":"com.example.app.monthly",\
                "storefrontCountryCodes":["USA","CAN"],"succeededCount":5,"failedCount":2}}
                """

            static let externalPurchaseToken = """
                {"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED",\
                "notificationUUID":"302e14d5-51f5-4503-b5a8-c3a1af68eb20","version":"2.0","signedDate":\(signedDate),\
                "externalPurchaseToken":{"externalPurchaseId":"SANDBOX_b2158121-7af9-49d4-9561-1f588205523e",\
                "tokenCreationDate":1746057600000,"appAppleId":1234567890,"bundleId":"com.example.app"}}
                """

            static let testNotification = """
                {"notificationType":"TEST","notificationUUID":"402e14d5-51f5-4503-b5a8-c3a1af68eb20",\
                "version":"2.0","signedDate":\(signedDate),"data":{"bundleId":"com.example.app",\
                "environment":"Production"}}
                """
        }
    }
#endif
