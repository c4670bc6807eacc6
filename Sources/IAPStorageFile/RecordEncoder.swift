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

    /// The JSON bytes of an operation; entries, most of what the journal holds, are written by hand.
    func encode(_ operation: JournalOperation) throws -> [UInt8] {
        switch operation {
        case .insert(let entry): try FastRecordEncoder.encode(entry, as: "insert")
        case .replace(let entry): try FastRecordEncoder.encode(entry, as: "replace")
        case .entry(let entry): try FastRecordEncoder.encode(entry, as: "entry")
        default: Array(try encoder.encode(operation))
        }
    }
}
