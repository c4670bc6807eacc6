#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Encodes the `op` value of a record.
///
/// One instance per thread or actor: it owns a `JSONEncoder` with the App Store conventions.
struct RecordEncoder {
    private let encoder = AppStoreJSON.makeEncoder()

    /// The JSON bytes of an operation.
    func encode(_ operation: JournalOperation) throws -> [UInt8] {
        Array(try encoder.encode(operation))
    }
}
