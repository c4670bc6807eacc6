import IAPCore
import IAPServerAPI
import IAPTestSupport
import Testing

@Suite("APIErrorCode")
struct APIErrorCodeTests {
    @Test func allEightySevenCodesAreKnownOnce() {
        let codes = APIErrorCode.allKnown
        #expect(codes.count == 87)
        #expect(Set(codes).count == 87)
        for code in codes {
            #expect(code.isKnown)
            let name = code.name ?? ""
            #expect(name.hasSuffix("Error"), "\(code)")
            #expect(code.httpStatus.map(Int64.init) == code.rawValue / 10_000, "\(code)")
            #expect(code.summary?.isEmpty == false)
        }
    }

    @Test func namesMatchApple() {
        #expect(APIErrorCode.transactionIdNotFound.rawValue == 4_040_010)
        #expect(APIErrorCode.transactionIdNotFound.name == "TransactionIdNotFoundError")
        #expect(APIErrorCode.generalBadRequest.name == "GeneralBadRequestError")
        #expect(APIErrorCode.badRequestAboveImageRequiresAnImage.rawValue == 4_000_224)
        #expect(
            APIErrorCode.transactionIdNotOriginalTransactionId.name == "TransactionIdIsNotOriginalTransactionIdError"
        )
        #expect(APIErrorCode.realtimeUrlNotFound.httpStatus == 404)
    }

    @Test func retryableTable() {
        let retryable = APIErrorCode.allKnown.filter(\.isRetryable)
        #expect(
            retryable == [
                .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable,
                .rateLimitExceeded, .generalInternal, .generalInternalRetryable,
            ]
        )
        #expect(APIErrorCode(rawValue: 5_000_099).isRetryable)
        #expect(APIErrorCode(rawValue: 9_990_000).isRetryable == false)
        #expect(APIErrorCode.transactionIdNotFound.isRetryable == false)
    }

    @Test func unknownCodesRoundTrip() throws {
        let code = try decode(APIErrorCode.self, json: "9990000")
        #expect(code.rawValue == 9_990_000)
        #expect(code.isKnown == false)
        #expect(try encodedJSON(code) == "9990000")
    }
}
