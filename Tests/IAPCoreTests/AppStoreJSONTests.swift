import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct AppStoreJSONTests {
    /// A one-date payload to exercise the date strategy through a real model.
    private func signedDate(_ number: String) throws -> Date? {
        try decode(NotificationPayload.self, json: #"{"signedDate":\#(number)}"#).signedDate
    }

    @Test func decodesIntegerMilliseconds() throws {
        let date = try #require(try signedDate("1698148900000"))
        #expect(date.timeIntervalSince1970 == 1_698_148_900)
        #expect(date.millisecondsSince1970 == 1_698_148_900_000)
    }

    @Test(
        arguments: [
            ("1697679936049.7297", 1_697_679_936_049),
            ("1697679936056.485", 1_697_679_936_056),
            ("1697679936049.9997", 1_697_679_936_049),
            ("0.9", 0),
            ("-0.9", 0),
            ("-1.5", -1),
            ("1.5e3", 1500),
        ] as [(String, Int64)]
    )
    func truncatesFractionalMillisecondsTowardZero(number: String, expected: Int64) throws {
        let date = try #require(try signedDate(number))
        #expect(date.millisecondsSince1970 == expected)
        #expect(date == Date(millisecondsSince1970: expected))
    }

    @Test func decodesNegativeDates() throws {
        let date = try #require(try signedDate("-62135769600000"))
        #expect(date.millisecondsSince1970 == -62_135_769_600_000)
        #expect(date.timeIntervalSince1970 == -62_135_769_600)
    }

    @Test func acceptsLargestExactMilliseconds() throws {
        #expect(AppStoreJSON.maximumMilliseconds == 281_474_976_710_655)
        let largest = try #require(try signedDate("281474976710655"))
        #expect(largest.millisecondsSince1970 == AppStoreJSON.maximumMilliseconds)
        let smallest = try #require(try signedDate("-281474976710655.9"))
        #expect(smallest.millisecondsSince1970 == -AppStoreJSON.maximumMilliseconds)
        #expect(try encodedJSON(NotificationPayload(signedDate: largest)) == #"{"signedDate":281474976710655}"#)
    }

    @Test(arguments: [
        "281474976710656",
        "-281474976710656",
        "9007199254740991",
        "9223372036854775807",
        "9223372036854775808",
        "1e300",
        "-1e300",
        "1e400",
    ])
    func rejectsOutOfRangeNumbers(number: String) {
        #expect(throws: DecodingError.self) {
            try signedDate(number)
        }
    }

    @Test(arguments: [#""1698148900000""#, "true", "{}", "[1698148900000]", #""2023-10-24T12:01:40Z""#])
    func rejectsDatesThatAreNotNumbers(value: String) {
        #expect(throws: DecodingError.self) {
            try signedDate(value)
        }
    }

    @Test func treatsNullAndMissingDatesAsAbsent() throws {
        #expect(try signedDate("null") == nil)
        #expect(try decode(NotificationPayload.self, json: "{}").signedDate == nil)
    }

    @Test func encodesDatesAsIntegerMilliseconds() throws {
        let payload = NotificationPayload(signedDate: Date(millisecondsSince1970: 1_697_679_936_049))
        #expect(try encodedJSON(payload) == #"{"signedDate":1697679936049}"#)

        let negative = NotificationPayload(signedDate: Date(millisecondsSince1970: -62_135_769_600_000))
        #expect(try encodedJSON(negative) == #"{"signedDate":-62135769600000}"#)
    }

    @Test func encodesSubMillisecondDatesRoundedToNearest() throws {
        let later = NotificationPayload(signedDate: Date(timeIntervalSince1970: 1.0006))
        #expect(try encodedJSON(later) == #"{"signedDate":1001}"#)
        let earlier = NotificationPayload(signedDate: Date(timeIntervalSince1970: 1.0004))
        #expect(try encodedJSON(earlier) == #"{"signedDate":1000}"#)
    }

    @Test func refusesToEncodeDatesBeyondInt64Milliseconds() {
        #expect(throws: EncodingError.self) {
            try encodedJSON(NotificationPayload(signedDate: Date(timeIntervalSince1970: 1e17)))
        }
        #expect(throws: EncodingError.self) {
            try encodedJSON(NotificationPayload(signedDate: Date(timeIntervalSince1970: -1e17)))
        }
    }

    @Test(arguments: [
        "1698148900000",
        "-62135769600000",
        "0",
        "1",
        "-1",
        "253402300799999",
        "281474976710655",
        "-281474976710655",
    ])
    func decodeThenEncodeReproducesTheNumber(number: String) throws {
        let json = #"{"signedDate":\#(number)}"#
        let payload = try decode(NotificationPayload.self, json: json)
        #expect(try encodedJSON(payload) == json)
    }

    @Test func decodeThenEncodeIsExactAcrossTheAcceptedRange() throws {
        // Near the top of every power of two up to the limit, where a Double holds the fewest fractions.
        var numbers: [Int64] = []
        for exponent in 1...48 {
            let top = (Int64(1) << exponent) - 1
            numbers += [top, top - 999, -top, -(top - 999)]
        }
        for number in numbers {
            let json = #"{"signedDate":\#(number)}"#
            let payload = try decode(NotificationPayload.self, json: json)
            #expect(try encodedJSON(payload) == json)
        }
    }

    @Test func fractionalInputReencodesAsTruncatedInteger() throws {
        let payload = try decode(NotificationPayload.self, json: #"{"signedDate":1697679936049.7297}"#)
        #expect(try encodedJSON(payload) == #"{"signedDate":1697679936049}"#)
    }

    @Test func encoderSortsKeysAndKeepsSlashes() throws {
        let payload = AppTransactionPayload(
            bundleId: "com.example",
            deviceVerification: "a/b+c==",
            appTransactionId: "7"
        )
        #expect(
            try encodedJSON(payload)
                == #"{"appTransactionId":"7","bundleId":"com.example","deviceVerification":"a/b+c=="}"#
        )
    }

    @Test func plainDecoderIsNotEnoughButAppStoreDecoderIs() throws {
        // Guards the reason makeDecoder exists: Foundation's default reads dates as seconds since 2001.
        let json = Data(#"{"signedDate":1698148900000}"#.utf8)
        let plain = try JSONDecoder().decode(NotificationPayload.self, from: json)
        #expect(plain.signedDate?.millisecondsSince1970 != 1_698_148_900_000)
        let appStore = try AppStoreJSON.makeDecoder().decode(NotificationPayload.self, from: json)
        #expect(appStore.signedDate?.millisecondsSince1970 == 1_698_148_900_000)
    }
}

@Suite struct DateMillisecondsTests {
    @Test(arguments: [0, 1, -1, 1_698_148_900_000, -62_135_769_600_000, 253_402_300_799_999] as [Int64])
    func millisecondsRoundTrip(milliseconds: Int64) {
        #expect(Date(millisecondsSince1970: milliseconds).millisecondsSince1970 == milliseconds)
    }

    @Test func createsDateFromMilliseconds() {
        #expect(Date(millisecondsSince1970: 1500).timeIntervalSince1970 == 1.5)
        #expect(Date(millisecondsSince1970: -62_135_769_600_000).timeIntervalSince1970 == -62_135_769_600)
    }

    @Test func roundsToNearestMillisecond() {
        #expect(Date(timeIntervalSince1970: 1.0006).millisecondsSince1970 == 1001)
        #expect(Date(timeIntervalSince1970: 1.0004).millisecondsSince1970 == 1000)
        #expect(Date(timeIntervalSince1970: -1.0006).millisecondsSince1970 == -1001)
    }

    @Test func clampsDatesBeyondInt64() {
        #expect(Date(timeIntervalSince1970: 1e300).millisecondsSince1970 == .max)
        #expect(Date(timeIntervalSince1970: -1e300).millisecondsSince1970 == .min)
    }
}
