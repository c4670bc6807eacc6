import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// The signed data the verify benchmark runs on: a realistic transaction signed by a fresh test PKI
/// (all P-256, like the benchmark's three-signature target assumes), and a real Apple notification.
struct BenchmarkFixture {
    let token: String
    let warm: AppStoreSignedDataVerifier
    let cold: AppStoreSignedDataVerifier
    let appleToken: String
    let appleCold: AppStoreSignedDataVerifier
    let leafDER: [UInt8]
    let payloadJSON: Data

    init() throws {
        let signedDate = Date(millisecondsSince1970: 1_767_225_600_000)
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        let payload = TransactionPayload(
            originalTransactionId: "2000000812345678",
            transactionId: "2000000812345679",
            webOrderLineItemId: "2000000098765432",
            bundleId: "com.example.app",
            productId: "com.example.app.premium.monthly",
            subscriptionGroupIdentifier: "21345678",
            purchaseDate: signedDate,
            originalPurchaseDate: signedDate,
            expiresDate: signedDate.addingTimeInterval(30 * 86_400),
            quantity: 1,
            type: .autoRenewableSubscription,
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            inAppOwnershipType: .purchased,
            signedDate: signedDate,
            environment: .production,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: .purchase,
            currency: "USD",
            price: 9_990,
            appTransactionId: "704289572311181848"
        )
        leafDER = pki.leaf.derBytes
        payloadJSON = try AppStoreJSON.makeEncoder().encode(payload)
        let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        token = try signer.sign(payload)
        let configuration = AppStoreSignedDataVerifier.Configuration(
            rootCertificates: [pki.root],
            bundleId: "com.example.app",
            environment: .production,
            appAppleId: 1_234_567_890
        )
        warm = try AppStoreSignedDataVerifier(configuration: configuration)
        var noCache = configuration
        noCache.cacheCapacity = 0
        cold = try AppStoreSignedDataVerifier(configuration: noCache)

        appleToken = Self.appleSample
        appleCold = try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: "com.nineton.taller",
                environment: .production,
                appAppleId: 6_450_284_872,
                cacheCapacity: 0
            )
        )
    }

    /// The real Apple-signed production TEST notification (also in Sources/Examples/Samples).
    static let appleSample = AppleSample.productionTestNotification
}
