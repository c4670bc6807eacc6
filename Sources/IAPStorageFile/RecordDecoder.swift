#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Decodes the `op` value of a record.
///
/// One instance per thread: it owns a `JSONDecoder` with the App Store conventions (dates in milliseconds).
struct RecordDecoder {
    private let decoder = AppStoreJSON.makeDecoder()

    /// Decodes an operation from its JSON bytes: the fast path for entries, `JSONDecoder` for the rest.
    func decode(_ body: UnsafeRawBufferPointer) throws -> JournalOperation {
        try FastRecordDecoder.decode(body) ?? decoder.decode(JournalOperation.self, from: Data(body))
    }
}
