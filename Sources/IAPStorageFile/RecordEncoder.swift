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
        case .insert(let entry, let signed): try FastRecordEncoder.encode(entry, as: "insert", signed: signed)
        case .replace(let entry, let signed): try FastRecordEncoder.encode(entry, as: "replace", signed: signed)
        case .entry(let entry, let signed): try FastRecordEncoder.encode(entry, as: "entry", signed: signed)
        default: Array(try encoder.encode(operation))
        }
    }
}
