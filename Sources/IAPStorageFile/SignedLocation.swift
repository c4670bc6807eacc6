/// Where the file store keeps an entry's signed transaction (the JWS it was recorded from).
///
/// Signed transactions are a few kilobytes each, too much to hold a million of in memory, so the store keeps
/// only where each one is: the journal record that wrote it, or the line of the signed-transaction file a
/// compaction moved it to, or (for a record not handed to the journal yet) its place in the pending list. Sixteen
/// bytes per entry, in an array by position, like the entries themselves.
struct SignedLocation: Sendable, Hashable {
    /// The byte offset of the line (or the index in the pending list).
    private(set) var offset: UInt64
    /// The line's length, without the newline.
    private(set) var length: UInt32
    /// 0 none, 1 the signed-transaction file, 2 pending, 3 + g journal g.
    private var file: UInt32

    /// No signed transaction.
    static let none = SignedLocation(offset: 0, length: 0, file: 0)

    /// The largest journal generation a location can name.
    static let maximumGeneration = UInt64(UInt32.max - 3)

    /// A line of journal `generation`.
    static func journal(_ generation: UInt64, offset: Int, length: Int) -> SignedLocation {
        SignedLocation(
            offset: UInt64(offset),
            length: UInt32(clamping: length),
            file: UInt32(clamping: min(generation, maximumGeneration) + 3)
        )
    }

    /// A line of the signed-transaction file.
    static func signedFile(_ reference: JournalOperation.SignedReference) -> SignedLocation {
        SignedLocation(offset: reference.offset, length: reference.length, file: 1)
    }

    /// A record still in the pending buffer, at `index` of its list of signed transactions.
    static func pending(_ index: Int) -> SignedLocation {
        SignedLocation(offset: UInt64(index), length: 0, file: 2)
    }

    enum Kind: Equatable {
        case none
        case signedFile(JournalOperation.SignedReference)
        case pending(Int)
        case journal(generation: UInt64, offset: Int, length: Int)
    }

    var kind: Kind {
        switch file {
        case 0: .none
        case 1: .signedFile(.init(offset: offset, length: length))
        case 2: .pending(Int(offset))
        default: .journal(generation: UInt64(file - 3), offset: Int(offset), length: Int(length))
        }
    }

    /// Whether there is a signed transaction.
    var exists: Bool { file != 0 }
}
