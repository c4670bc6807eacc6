import Foundation
import IAPCore
import IAPLegacyReceipts
import IAPTestSupport
import Testing

/// DER building blocks for hand-made receipts.
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 {
            return [UInt8(count)]
        }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        [tag] + length(contents.count) + contents
    }

    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if let first = bytes.first, first >= 0x80 {
            bytes.insert(0, at: 0)
        }
        return tlv(0x02, bytes)
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func octets(_ bytes: [UInt8]) -> [UInt8] { tlv(0x04, bytes) }
    static func sequence(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func set(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }
    static func explicit0(_ contents: [UInt8]) -> [UInt8] { tlv(0xA0, contents) }

    static let signedDataOID: [UInt8] = tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
    static let dataOID: [UInt8] = tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])
    static let sha256Algorithm = sequence(
        tlv(0x06, [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]),
        [0x05, 0x00]
    )

    /// A receipt attribute `SEQUENCE { type, version, OCTET STRING value }`.
    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        sequence(integer(type), integer(1), octets(value))
    }

    /// A definite-length PKCS#7 app receipt, shaped like the App Store's, around these attributes.
    static func appReceipt(_ attributes: [[UInt8]], signerInfos: [UInt8] = set([])) -> [UInt8] {
        let content = sequence(dataOID, explicit0(octets(set(attributes))))
        let signedData = sequence(integer(1), set([sha256Algorithm]), content, signerInfos)
        return sequence(signedDataOID, explicit0(signedData))
    }

    static func inApp(_ fields: [(Int, String)]) -> [UInt8] {
        attribute(17, set(fields.map { attribute($0.0, utf8($0.1)) }))
    }
}

@Suite("LegacyReceipt")
struct LegacyReceiptTests {
    static func fixture(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: try Fixture.url(name, fileExtension: "b64")), as: UTF8.self)
    }

    static func malformed(_ body: () throws -> Any?) -> String? {
        do {
            let value = try body()
            Issue.record("expected malformedSignedData, got \(String(describing: value))")
            return nil
        } catch let error as IAPError {
            #expect(error.code == .malformedSignedData)
            return error.message
        } catch {
            Issue.record("expected an IAPError, got \(error)")
            return nil
        }
    }

    // MARK: Apple's fixtures

    @Test func xcodeReceiptWithATransactionGivesItsId() throws {
        #expect(
            try LegacyReceipt.transactionId(fromAppReceipt: Self.fixture("xcode-app-receipt-with-transaction")) == "0"
        )
    }

    @Test func xcodeReceiptWithoutInAppPurchasesGivesNil() throws {
        #expect(try LegacyReceipt.transactionId(fromAppReceipt: Self.fixture("xcode-app-receipt-empty")) == nil)
    }

    @Test func legacyTransactionReceiptGivesItsId() throws {
        #expect(
            try LegacyReceipt.transactionId(fromTransactionReceipt: Self.fixture("legacyTransaction")) == "33993399"
        )
    }

    @Test func lineWrappedBase64IsAccepted() throws {
        let text = try Self.fixture("xcode-app-receipt-with-transaction")
        var wrapped = ""
        for (index, character) in text.enumerated() {
            wrapped.append(character)
            if index % 64 == 63 {
                wrapped.append("\r\n")
            }
        }
        #expect(try LegacyReceipt.transactionId(fromAppReceipt: "  " + wrapped + "\n") == "0")
    }

    // MARK: App Store-shaped DER receipts

    @Test func definiteLengthReceiptGivesTheFirstIdInOrder() throws {
        let receipt = DER.appReceipt([
            DER.attribute(2, DER.utf8("com.example.app")),
            DER.inApp([(1702, "com.example.coins"), (1705, "1000000000000001"), (1703, "1000000000000002")]),
            DER.inApp([(1703, "1000000000000003")]),
        ])
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: receipt) == "1000000000000001")
        #expect(
            try LegacyReceipt.transactionId(fromAppReceipt: Data(receipt).base64EncodedString()) == "1000000000000001"
        )
    }

    @Test func inAppRecordWithOnlyATransactionIdentifier() throws {
        let receipt = DER.appReceipt([DER.inApp([(1701, "1"), (1703, "2000000123456789")])])
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: receipt) == "2000000123456789")
    }

    @Test func recordsWithoutIdentifiersAreSkipped() throws {
        let receipt = DER.appReceipt([DER.inApp([(1702, "p")]), DER.inApp([(1705, "77")])])
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: receipt) == "77")
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: DER.appReceipt([DER.inApp([(1702, "p")])])) == nil)
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: DER.appReceipt([])) == nil)
    }

    @Test func largeReceiptWithLongFormLengths() throws {
        let records = (0..<3_000).map { DER.inApp([(1703, String(1_000_000 + $0))]) }
        let receipt = DER.appReceipt(records)
        #expect(receipt.count > 65_536)
        #expect(try LegacyReceipt.transactionId(fromAppReceiptBytes: receipt) == "1000000")
    }

    // MARK: Malformed app receipts

    @Test func notBase64() {
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceipt: "not base64!") }?.contains("base64")
                == true
        )
        #expect(Self.malformed { try LegacyReceipt.transactionId(fromAppReceipt: " \n") }?.contains("empty") == true)
    }

    @Test func truncatedReceiptNamesTheOffset() throws {
        let receipt = DER.appReceipt([DER.inApp([(1703, "1")])])
        let message = Self.malformed {
            try LegacyReceipt.transactionId(fromAppReceiptBytes: Array(receipt.dropLast(3)))
        }
        #expect(message?.contains("at byte 0") == true)
        #expect(message?.contains("runs past the end") == true)
    }

    @Test func trailingBytesAreRejected() {
        let receipt = DER.appReceipt([DER.inApp([(1703, "1")])]) + [0x00]
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: receipt) }?.contains("follow") == true
        )
    }

    @Test func otherContentTypesAreRejected() {
        let notSignedData = DER.sequence(DER.dataOID, DER.explicit0(DER.octets([])))
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: notSignedData) }?
                .contains("not PKCS#7 signedData") == true
        )
        let notASequence = DER.set([DER.signedDataOID])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: notASequence) }?.contains("SET")
                == true
        )
        let detached = DER.sequence(
            DER.signedDataOID,
            DER.explicit0(DER.sequence(DER.integer(1), DER.set([]), DER.sequence(DER.dataOID), DER.set([])))
        )
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: detached) }?.contains("no content")
                == true
        )
    }

    @Test func attributeValuesMustHaveTheRightTypes() {
        let notOctets = DER.appReceipt([DER.sequence(DER.integer(17), DER.integer(1), DER.utf8("x"))])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: notOctets) }?
                .contains("not an OCTET STRING") == true
        )
        let notUTF8 = DER.appReceipt([DER.attribute(17, DER.set([DER.attribute(1703, DER.tlv(0x16, Array("1".utf8)))]))]
        )
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: notUTF8) }?.contains("UTF8String")
                == true
        )
        let invalidUTF8 = DER.appReceipt([
            DER.attribute(17, DER.set([DER.attribute(1703, DER.tlv(0x0C, [0xFF, 0xFE]))]))
        ])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: invalidUTF8) }?.contains("UTF-8")
                == true
        )
        let empty = DER.appReceipt([DER.inApp([(1703, "")])])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: empty) }?.contains("empty") == true
        )
        let twoFields = DER.appReceipt([DER.sequence(DER.integer(17), DER.octets([]))])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: twoFields) }?.contains("2 fields")
                == true
        )
        let hugeInteger = DER.appReceipt([
            DER.sequence(DER.tlv(0x02, Array(repeating: 1, count: 9)), DER.integer(1), DER.octets([]))
        ])
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: hugeInteger) }?.contains("64 bits")
                == true
        )
    }

    @Test func encodingViolationsAreRejected() {
        // A primitive element with an indefinite length.
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: [0x04, 0x80, 0x00, 0x00]) }?.contains(
                "indefinite"
            ) == true
        )
        // Five length octets.
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: [0x30, 0x85, 0, 0, 0, 0, 1, 0]) }?
                .contains("at most 4") == true
        )
        // An indefinite-length element never closed.
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: [0x30, 0x80, 0x02, 0x01, 0x01]) }?
                .contains("end-of-contents") == true
        )
        // Nesting deeper than the reader accepts.
        let deep =
            Array(repeating: [UInt8]([0x30, 0x80]), count: 200).flatMap { $0 }
            + Array(repeating: [UInt8]([0x00, 0x00]), count: 200).flatMap { $0 }
        #expect(Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: deep) }?.contains("nest") == true)
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromAppReceiptBytes: []) }?.contains("end of the data")
                == true
        )
    }

    // MARK: Transaction receipts

    static func transactionReceipt(purchaseInfo: String) -> String {
        Data("{\n\t\"signature\" = \"AAAA\";\n\t\"purchase-info\" = \"\(purchaseInfo)\";\n}".utf8).base64EncodedString()
    }

    @Test func transactionReceiptMatchesLikeApplesExpression() throws {
        let info = Data(
            "{\n\t\"original-transaction-id\" = \"1\";\n\t\"transaction-id\"  =\t\"1000000000000042\";\n}".utf8
        )
        .base64EncodedString()
        #expect(
            try LegacyReceipt.transactionId(fromTransactionReceipt: Self.transactionReceipt(purchaseInfo: info))
                == "1000000000000042"
        )
    }

    @Test func malformedTransactionReceipts() {
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromTransactionReceipt: "%%%") }?.contains("base64")
                == true
        )
        let binary = Data([0xFF, 0xFE, 0x00]).base64EncodedString()
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromTransactionReceipt: binary) }?.contains("UTF-8")
                == true
        )
        let noInfo = Data(#"{ "purchase-info"="abc"; }"#.utf8).base64EncodedString()
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromTransactionReceipt: noInfo) }?.contains(
                "no \"purchase-info\""
            ) == true
        )
        let noId = Self.transactionReceipt(purchaseInfo: Data(#"{ "product-id" = "x"; }"#.utf8).base64EncodedString())
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromTransactionReceipt: noId) }?.contains(
                "no \"transaction-id\""
            ) == true
        )
        let badInfo = Self.transactionReceipt(purchaseInfo: "abc")
        #expect(
            Self.malformed { try LegacyReceipt.transactionId(fromTransactionReceipt: badInfo) }?.contains(
                "purchase-info"
            ) == true
        )
    }

    // MARK: Robustness

    static func mutate(_ input: [UInt8], using generator: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !bytes.isEmpty else { break }
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 2: bytes.removeSubrange(index..<bytes.count)
            case 3: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
            case 4: bytes[index] = [0x00, 0x80, 0x81, 0x84, 0xFF, 0x30, 0x24][Int.random(in: 0..<7, using: &generator)]
            default:
                let end = min(bytes.count, index + Int.random(in: 1...16, using: &generator))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
        return bytes
    }

    @Test func randomMutationsNeverCrash() throws {
        var seeds = [
            Array(Data(base64Encoded: try Self.fixture("xcode-app-receipt-with-transaction")) ?? Data()),
            Array(Data(base64Encoded: try Self.fixture("xcode-app-receipt-empty")) ?? Data()),
            DER.appReceipt([DER.inApp([(1705, "1"), (1703, "2")]), DER.inApp([(1703, "3")])]),
        ]
        #expect(seeds.allSatisfy { $0.count > 100 })
        var generator = SplitMix64(seed: 0x5EED)
        var outcomes = (found: 0, none: 0, rejected: 0)
        for round in 0..<20_000 {
            let input = Self.mutate(seeds[round % seeds.count], using: &generator)
            do {
                if try LegacyReceipt.transactionId(fromAppReceiptBytes: input) != nil {
                    outcomes.found += 1
                } else {
                    outcomes.none += 1
                }
            } catch let error as IAPError {
                #expect(error.code == .malformedSignedData, "round \(round): \(error)")
                outcomes.rejected += 1
            }
            if round % 2_000 == 1_999 {
                seeds.append(input)
            }
        }
        #expect(outcomes.rejected > 0)
        #expect(outcomes.found > 0)

        let legacy = Array(try Self.fixture("legacyTransaction").utf8)
        for round in 0..<2_000 {
            let text = String(decoding: Self.mutate(legacy, using: &generator), as: UTF8.self)
            do {
                _ = try LegacyReceipt.transactionId(fromTransactionReceipt: text)
            } catch let error as IAPError {
                #expect(error.code == .malformedSignedData, "round \(round): \(error)")
            }
        }
    }
}
