import Foundation
import IAPCore
import IAPTestSupport
@testable import IAPStorageFile
import Testing

@Suite struct FastRecordDecoderTests {
    private static func variants() -> [LedgerEntry] {
        var plain = Fixture.entry("2000000812345679", user: "user-1", original: "2000000812345678", second: 5)
        plain.orderId = "order-1"
        plain.sequence = 12
        plain.revision = 3
        var retrying = plain
        retrying.deliveryState = .retrying
        retrying.deliveryAttempts = 4
        retrying.nextAttemptAt = Fixture.date(-60)
        retrying.lastError = "hook timed out after 30 s"
        var revoked = plain
        revoked.deliveryState = .delivered
        revoked.deliveredAt = Fixture.date(9)
        revoked.revokedAt = Fixture.date(99)
        revoked.revocationDelivered = true
        revoked.grantGeneration = 2
        revoked.orderId = nil
        revoked.transaction.revocationReason = RevocationReason(rawValue: 1)
        revoked.transaction.revocationDate = Fixture.date(99)
        var unusual = plain
        unusual.transaction.type = ProductType(rawValue: "Something New")
        unusual.transaction.expiresDate = Date(millisecondsSince1970: -62_135_769_600_000)
        return [plain, retrying, revoked, unusual]
    }

    @Test(arguments: variants())
    func decodesWhatTheEncoderWritesLikeJSONDecoder(_ entry: LedgerEntry) throws {
        let encoder = RecordEncoder()
        let jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl"
        let operations: [JournalOperation] = [
            .insert(entry, signed: .unchanged), .insert(entry, signed: .jws(jws)), .replace(entry, signed: .unchanged),
            .replace(entry, signed: .removed), .replace(entry, signed: .jws(jws)), .entry(entry, signed: .unchanged),
            .entry(entry, signed: .reference(.init(offset: 123_456_789, length: 1_500))),
            .insert(entry, signed: .split(header: 58, rest: "eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl")),
            .replace(entry, signed: .split(header: 9_876_543_210, rest: "eyJ0.c2ln")),
        ]
        for operation in operations {
            let bytes = try encoder.encode(operation)
            let fast = bytes.withUnsafeBytes { FastRecordDecoder.decode($0) }
            let full = try AppStoreJSON.makeDecoder().decode(JournalOperation.self, from: Data(bytes))
            #expect(fast != nil, "the fast path refused \(String(decoding: bytes, as: UTF8.self))")
            #expect(fast == full)
            #expect(full == operation)
        }
    }

    @Test func leavesEscapesAndOtherKindsToJSONDecoder() throws {
        let escaped = Fixture.entry("t-1", user: "user-1")  // its orderId holds quotes, a newline and non-ASCII
        let encoder = RecordEncoder()
        let bytes = try encoder.encode(.insert(escaped, signed: .unchanged))
        #expect(bytes.withUnsafeBytes { FastRecordDecoder.decode($0) } == nil)
        #expect(try bytes.withUnsafeBytes { try RecordDecoder().decode($0) } == .insert(escaped, signed: .unchanged))
        let binding = try encoder.encode(.bind(token: "token", userId: "user-1"))
        #expect(binding.withUnsafeBytes { FastRecordDecoder.decode($0) } == nil)
        #expect(
            try binding.withUnsafeBytes { try RecordDecoder().decode($0) } == .bind(token: "token", userId: "user-1")
        )
    }

    @Test func refusesMalformedInputInsteadOfGuessing() throws {
        let good = try RecordEncoder().encode(.insert(Self.variants()[0], signed: .jws("a.b.c")))
        let text = String(decoding: good, as: UTF8.self)
        let damaged = [
            text.replacingOccurrences(of: "\"revision\":3", with: "\"revision\":3.5"),
            text.replacingOccurrences(of: "\"deliveryState\":\"pending\"", with: "\"deliveryState\":\"lost\""),
            text.replacingOccurrences(of: "\"sequence\":12,", with: ""),
            text.replacingOccurrences(of: "\"sequence\":12", with: "\"sequence\":12,\"sequence\":13"),
            String(text.dropLast()),
            text.replacingOccurrences(of: "\"signedTransaction\":\"a.b.c\"", with: "\"signed\":[1,2]"),
            text.replacingOccurrences(of: "\"signedTransaction\":\"a.b.c\"", with: "\"signedTransaction\":7"),
            text.replacingOccurrences(
                of: "\"signedTransaction\":\"a.b.c\"",
                with: "\"signedTransaction\":{\"header\":-1,\"rest\":\"b.c\"}"
            ),
            text.replacingOccurrences(
                of: "\"signedTransaction\":\"a.b.c\"",
                with: "\"signedTransaction\":{\"rest\":\"b.c\",\"header\":1}"
            ),
            text.replacingOccurrences(
                of: "\"signedTransaction\":\"a.b.c\"",
                with: "\"signedTransaction\":{\"header\":1,\"rest\":\"b.c\",\"more\":2}"
            ),
        ]
        for variant in damaged {
            #expect(variant != text)
            #expect(Array(variant.utf8).withUnsafeBytes { FastRecordDecoder.decode($0) } == nil, "\(variant)")
        }
    }

    /// Thousands of deterministic random mutations of written records: whenever the fast path answers,
    /// `JSONDecoder` must give the same operation.
    @Test func agreesWithJSONDecoderOnMutatedRecords() throws {
        var generator = SplitMix64(seed: 0x5EED)
        let records = try Self.variants().enumerated().map { index, entry in
            let signed: JournalOperation.SignedField =
                switch index % 3 {
                case 0: .jws("eyJh.eyJ0.c2ln")
                case 1: .split(header: 1_234, rest: "eyJ0.c2ln")
                default: .removed
                }
            return try Array(RecordEncoder().encode(.replace(entry, signed: signed)))
        }
        let alphabet = Array(#"{}[]:,"\ -+.0123456789eEtrufalsn x"#.utf8)
        var accepted = 0
        for round in 0..<20_000 {
            let bytes = generator.mutate(records[round % records.count], alphabet: alphabet)
            guard let fast = bytes.withUnsafeBytes({ FastRecordDecoder.decode($0) }) else { continue }
            accepted += 1
            let full = try? AppStoreJSON.makeDecoder().decode(JournalOperation.self, from: Data(bytes))
            #expect(full == fast, "disagreement on \(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 100, "the mutations should leave many records in the fast path's shape")
    }
}
