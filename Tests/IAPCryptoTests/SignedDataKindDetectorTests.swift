import Foundation
import IAPCore
@testable import IAPCrypto
import Testing

/// Kind detection answers a plain transaction without `JSONDecoder`; whatever the payload, its answer must be the
/// one `JSONDecoder`'s probe gives.
@Suite("Kind detection fast path")
struct SignedDataKindDetectorTests {
    /// The kind, or the error code, a detector answers.
    static func outcome(_ detect: () throws -> SignedDataKind) -> String {
        do {
            return try detect().rawValue
        } catch let error as IAPError {
            return "error \(error.code.rawValue)"
        } catch {
            return "error \(error)"
        }
    }

    static func expectSameAnswer(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let payload = Array(json.utf8)
        let fast = outcome { try SignedDataKindDetector.detect(payload: payload) }
        let reference = outcome { try SignedDataKindDetector.detectWithJSONDecoder(payload: payload) }
        #expect(fast == reference, "\(json)", sourceLocation: sourceLocation)
    }

    static let transaction = """
        {"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","bundleId":"com.example.app","currency":"USD",\
        "environment":"Sandbox","inAppOwnershipType":"PURCHASED","originalPurchaseDate":1767225600000,\
        "originalTransactionId":"2000000000000001","price":990,"productId":"coins.100","purchaseDate":1767225600000,\
        "quantity":1,"signedDate":1767225600000,"storefront":"USA","storefrontId":"143441",\
        "transactionId":"2000000000000001","transactionReason":"PURCHASE","type":"Consumable"}
        """

    @Test func aPlainTransactionIsAnsweredWithoutJSONDecoder() throws {
        let payload = Array(Self.transaction.utf8)
        #expect(SignedDataKindDetector.isPlainTransaction(payload))
        #expect(try SignedDataKindDetector.detect(payload: payload) == .transaction)
    }

    @Test func anotherKindsFieldNameOnlyAsAValueIsStillAPlainTransaction() throws {
        // Every key is a transaction field: the name of a notification's field as a value decides nothing.
        let value = Array(#"{"transactionId":"1","productId":"notificationType","storefront":"receiptType"}"#.utf8)
        #expect(SignedDataKindDetector.plainTransaction(value)?.productId == "notificationType")
        #expect(try SignedDataKindDetector.detectWithJSONDecoder(payload: value) == .transaction)
        // As a key it goes to JSONDecoder, whatever its value; an unknown key that names no other kind does not.
        let key = Array(#"{"transactionId":"1","notificationType":"TEST"}"#.utf8)
        #expect(SignedDataKindDetector.plainTransaction(key) == nil)
        let unknown = Array(#"{"transactionId":"1","somethingNew":"notificationTypes"}"#.utf8)
        #expect(SignedDataKindDetector.plainTransaction(unknown)?.transactionId == "1")
    }

    @Test func payloadsThatLookLikeTransactionsButAreNotAnswerAsJSONDecoderDoes() {
        let cases = [
            // A field of another kind, as a key or only as a value: the probe decides.
            #"{"transactionId":"1","notificationType":"TEST"}"#,
            #"{"transactionId":"1","notificationUUID":null}"#,
            #"{"transactionId":"1","productId":"notificationType"}"#,
            #"{"bundleId":"a","receiptType":"Production"}"#,
            #"{"bundleId":"a","applicationVersion":"1"}"#,
            #"{"purchaseDate":1,"originalApplicationVersion":"1"}"#,
            #"{"transactionId":"1","autoRenewStatus":1}"#,
            #"{"transactionId":"1","autoRenewStatus":"1"}"#,
            #"{"transactionId":"1","renewalDate":"soon"}"#,
            #"{"transactionId":"1","expirationIntent":4294967296}"#,
            #"{"transactionId":"1","notificationType":5}"#,
            // Escapes, nesting, duplicates and wrong types the fast decoder hands back.
            #"{"transactionId":"1","notification\u0054ype":"TEST"}"#,
            #"{"transaction\u0049d":"1"}"#,
            #"{"transactionId":"1","data":{"notificationType":"TEST"}}"#,
            #"{"transactionId":"1","transactionId":"2"}"#,
            #"{"transactionId":1}"#,
            #"{"purchaseDate":"yesterday"}"#,
            #"{"purchaseDate":1.5}"#,
            #"{"transactionId":null,"bundleId":null,"purchaseDate":null}"#,
            #"{"transactionId":null,"originalTransactionId":"1"}"#,
            #"{"foo":1,"foo":2,"bundleId":"a"}"#,
            #"{"transactionId":"1"} x"#,
            #"{"transactionId":"1""#,
            #" {"transactionId":"é"} "#,
            "{}", "[]", "", "null",
        ]
        for json in cases {
            Self.expectSameAnswer(json)
        }
    }

    @Test func mutatedTransactionsAnswerAsJSONDecoderDoes() {
        var state: UInt64 = 7
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let insertions = [
            #""notificationType":"TEST","#, #""notificationUUID":null,"#, #""receiptType":"Sandbox","#,
            #""autoRenewStatus":1,"#, #""renewalDate":1,"#, #""expirationIntent":"x","#, #""transactionId":"9","#,
            #""transactionId":null,"#, #""bundleId":7,"#, #""data":{},"#, #""x":[1,2],"#, #""x":"\n","#,
            #""unknown":true,"#, #""purchaseDate":-1,"#, #""signedDate":1e3,"#, #""productId":"renewalDate","#,
        ]
        for _ in 0..<3_000 {
            var json = Array(Self.transaction)
            for _ in 0..<(next() % 3) {
                json.insert(contentsOf: insertions[next() % insertions.count], at: 1)
            }
            if next() % 5 == 0 {
                // Break a byte somewhere: invalid JSON or a changed value.
                let replacements = Array("\"{}:,x1 \\")
                json[next() % json.count] = replacements[next() % replacements.count]
            }
            Self.expectSameAnswer(String(json))
        }
    }
}
