import Foundation
import IAPCore
import IAPStorageFile
import IAPTestSupport
import Testing

/// The hand-written entry encoder must write what `JSONDecoder` reads back as the same entry.
@Suite("Fast record encoding")
struct FastRecordEncoderTests {
    final class Generator {
        private var random: SplitMix64

        init(state: UInt64) {
            random = SplitMix64(seed: state)
        }

        func next() -> UInt64 {
            random.next()
        }

        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            next() % 3 == 0 ? nil : value()
        }

        func text() -> String {
            let pieces = [
                "a", "Z", "9", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{08}", "\u{0C}", "\u{1F}", "é", "e\u{301}",
                "😀", " ", "{", "}",
                ",",
            ]
            return (0..<Int(next() % 12)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
        }

        func date() -> Date {
            Date(millisecondsSince1970: Int64(bitPattern: next() % (1 << 47)) - (1 << 46))
        }
    }

    @Test func randomEntriesRoundTripThroughJSONDecoder() throws {
        let random = Generator(state: 42)
        let decoder = AppStoreJSON.makeDecoder()
        for round in 0..<2_000 {
            var transaction = TransactionPayload(
                originalTransactionId: random.maybe(random.text()),
                transactionId: random.text(),
                webOrderLineItemId: random.maybe(random.text()),
                bundleId: random.maybe(random.text()),
                productId: random.maybe(random.text()),
                subscriptionGroupIdentifier: random.maybe(random.text()),
                purchaseDate: random.maybe(random.date()),
                originalPurchaseDate: random.maybe(random.date()),
                expiresDate: random.maybe(random.date()),
                quantity: random.maybe(Int32(truncatingIfNeeded: random.next())),
                type: random.maybe(ProductType(rawValue: random.text())),
                appAccountToken: random.maybe(random.text()),
                inAppOwnershipType: random.maybe(.familyShared),
                signedDate: random.maybe(random.date()),
                revocationReason: random.maybe(RevocationReason(rawValue: Int32(truncatingIfNeeded: random.next()))),
                revocationDate: random.maybe(random.date()),
                isUpgraded: random.maybe(random.next() % 2 == 0),
                offerType: random.maybe(.promotionalOffer),
                offerIdentifier: random.maybe(random.text()),
                environment: random.maybe(AppStoreEnvironment(rawValue: random.text())),
                storefront: random.maybe(random.text()),
                storefrontId: random.maybe(random.text()),
                transactionReason: random.maybe(.renewal),
                currency: random.maybe(random.text()),
                price: random.maybe(Int64(bitPattern: random.next())),
                offerDiscountType: random.maybe(.payUpFront),
                appTransactionId: random.maybe(random.text()),
                offerPeriod: random.maybe(random.text()),
                revocationType: random.maybe(.refundProrated),
                revocationPercentage: random.maybe(Int32(truncatingIfNeeded: random.next())),
                billingPlanType: random.maybe(.monthly)
            )
            if round % 50 == 0 {
                transaction.commitmentInfo = TransactionCommitmentInfo(billingPeriodNumber: 2, commitmentPrice: 9_990)
            }
            var entry = LedgerEntry(
                transaction: transaction,
                transactionId: random.text(),
                originalTransactionId: random.text(),
                userId: random.text(),
                productId: random.text(),
                orderId: random.maybe(random.text()),
                recordedAt: random.date()
            )
            entry.deliveryState =
                [.pending, .delivered, .retrying, .deadLettered, .awaitingOwner][Int(random.next() % 5)]
            entry.deliveryAttempts = Int(random.next() % 20)
            entry.nextAttemptAt = random.maybe(random.date())
            entry.lastError = random.maybe(random.text())
            entry.deliveredAt = random.maybe(random.date())
            entry.revokedAt = random.maybe(random.date())
            entry.revocationDelivered = random.next() % 2 == 0
            entry.grantGeneration = Int(random.next() % 5)
            entry.grantAttempted = random.next() % 2 == 0
            entry.grantedUnits = random.maybe(Int64(bitPattern: random.next()))
            entry.sequence = Int64(random.next() % 1_000_000)
            entry.revision = Int64(random.next() % 1_000)

            let bytes = try FastRecordEncoder.encode(entry, as: "replace")
            let decoded = try decoder.decode([String: LedgerEntry].self, from: Data(bytes))
            #expect(decoded == ["replace": entry], "round \(round): \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func aDateBeyondSixtyFourBitMillisecondsIsAnErrorNotACrash() {
        var entry = LedgerEntry(
            transaction: TransactionPayload(transactionId: "1"),
            transactionId: "1",
            originalTransactionId: "1",
            userId: "u",
            productId: "p",
            recordedAt: Date(timeIntervalSince1970: 1e300)
        )
        entry.sequence = 1
        #expect(throws: IAPError(.storageFailure)) { try FastRecordEncoder.encode(entry, as: "insert") }
    }

    @Test func aTransactionDateTheLedgerCannotReadBackIsAnErrorNotARecord() {
        // 2^48 ms: within 64 bits, past what the ledger's readers accept.
        let entry = LedgerEntry(
            transaction: TransactionPayload(transactionId: "1", expiresDate: Date(millisecondsSince1970: 1 << 48)),
            transactionId: "1",
            originalTransactionId: "1",
            userId: "u",
            productId: "p",
            recordedAt: Date(millisecondsSince1970: 0)
        )
        #expect(throws: IAPError(.storageFailure)) { try FastRecordEncoder.encode(entry, as: "insert") }
    }
}
