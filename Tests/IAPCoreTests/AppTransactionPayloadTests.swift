import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct AppTransactionPayloadTests {
    @Test func decodesEveryFieldOfAppleAppTransaction() throws {
        let app = try Fixture.decode(AppTransactionPayload.self, "appTransaction")

        #expect(app.receiptType == .localTesting)
        #expect(app.receiptType?.rawValue == "LocalTesting")
        #expect(app.appAppleId == 531_412)
        #expect(app.bundleId == "com.example")
        #expect(app.applicationVersion == "1.2.3")
        #expect(app.versionExternalIdentifier == 512)
        #expect(ms(app.receiptCreationDate) == 1_698_148_900_000)
        #expect(ms(app.originalPurchaseDate) == 1_698_148_800_000)
        #expect(app.originalApplicationVersion == "1.1.2")
        #expect(app.deviceVerification == "device_verification_value")
        #expect(app.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a")
        #expect(ms(app.preorderDate) == 1_698_148_700_000)
        #expect(app.appTransactionId == "71134")
        #expect(app.originalPlatform == .iOS)
        #expect(app.originalPlatform?.rawValue == "iOS")
    }

    @Test func signingDateIsReceiptCreationDate() throws {
        let app = try Fixture.decode(AppTransactionPayload.self, "appTransaction")
        #expect(app.signingDate == Date(millisecondsSince1970: 1_698_148_900_000))
        #expect(AppTransactionPayload(originalPurchaseDate: Date(millisecondsSince1970: 5)).signingDate == nil)
    }

    @Test func decodesXcodeAppTransactionWithYearOneDate() throws {
        // The payload of Apple's `xcode-signed-app-transaction`: no appAppleId, fractional
        // receiptCreationDate, originalPurchaseDate in the year 1 and an undocumented `requestDate`.
        let app = try Fixture.decode(AppTransactionPayload.self, "xcodeAppTransaction")

        #expect(app.receiptType == .xcode)
        #expect(app.appAppleId == nil)
        #expect(app.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(app.applicationVersion == "1")
        #expect(app.originalApplicationVersion == "1")
        #expect(app.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")
        #expect(app.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(ms(app.receiptCreationDate) == 1_697_680_122_257)
        #expect(ms(app.originalPurchaseDate) == -62_135_769_600_000)
        #expect(app.originalPurchaseDate?.timeIntervalSince1970 == -62_135_769_600)
        #expect(app.preorderDate == nil)

        // Slashes stay unescaped and the year-1 date is written back exactly.
        let json = try encodedJSON(app)
        #expect(
            json.contains(#""deviceVerification":"cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf""#)
        )
        #expect(json.contains(#""originalPurchaseDate":-62135769600000"#))
        #expect(!json.contains("requestDate"))
    }

    @Test func reencodesAppleFixtureWithoutLosingAField() throws {
        try expectReencodesIdentically(AppTransactionPayload.self, fixture: "appTransaction")
        try expectRoundTrip(try Fixture.decode(AppTransactionPayload.self, "appTransaction"))
        try expectRoundTrip(try Fixture.decode(AppTransactionPayload.self, "xcodeAppTransaction"))
    }

    @Test func keepsUnknownPlatformAndReceiptType() throws {
        let app = try decode(
            AppTransactionPayload.self,
            json: #"{"receiptType":"Staging","originalPlatform":"watchOS"}"#
        )
        #expect(app.receiptType?.rawValue == "Staging")
        #expect(app.receiptType?.isKnown == false)
        #expect(app.originalPlatform?.rawValue == "watchOS")
        #expect(app.originalPlatform?.isKnown == false)
        #expect(try encodedJSON(app) == #"{"originalPlatform":"watchOS","receiptType":"Staging"}"#)
    }

    @Test func rejectsWrongTypes() {
        #expect(throws: DecodingError.self) {
            try decode(AppTransactionPayload.self, json: #"{"appAppleId":"blue"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(AppTransactionPayload.self, json: #"{"versionExternalIdentifier":"512"}"#)
        }
    }
}
