import Foundation
import IAPCore
import Testing

/// What an app or a server shows of an `IAPError` when it treats it as any error.
@Suite("IAPError as any Error")
struct IAPErrorTests {
    @Test func localizedDescriptionNamesTheCodeAndTheMessage() {
        let error: any Error = IAPError(.signatureInvalid, "the ES256 signature does not match the signed data")
        #expect(error.localizedDescription == "signatureInvalid: the ES256 signature does not match the signed data")
        #expect((error as? any LocalizedError)?.errorDescription == error.localizedDescription)
    }

    @Test func aWrappedErrorKeepsItsCauseInTheDescription() {
        struct Cause: Error, CustomStringConvertible {
            var description: String { "disk full" }
        }
        let error: any Error = IAPError.wrapping(Cause(), as: .storageFailure, "writing the journal failed")
        #expect(error.localizedDescription == "storageFailure: writing the journal failed: disk full")
    }
}
