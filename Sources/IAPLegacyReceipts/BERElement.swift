import IAPCore
/// One element of BER-encoded data, as ``BERReader`` finds it: its tag and where its contents are.
///
/// The contents are a range of the reader's bytes. For an element with an indefinite length, the range
/// excludes the end-of-contents octets that close it.
struct BERElement: Sendable, Equatable {
    /// The class of a tag.
    enum TagClass: UInt8, Sendable {
        case universal = 0
        case application = 1
        case contextSpecific = 2
        case `private` = 3
    }

    /// The tag's class.
    var tagClass: TagClass
    /// Whether the contents are themselves elements.
    var isConstructed: Bool
    /// The tag number.
    var tagNumber: UInt32
    /// Where the element's first identifier octet is.
    var offset: Int
    /// The range of the contents.
    var contents: Range<Int>
    /// Where the next element starts.
    var end: Int

    /// Whether the element has this universal tag number.
    func isUniversal(_ number: UInt32) -> Bool {
        tagClass == .universal && tagNumber == number
    }

    /// A short description for error messages, such as `SEQUENCE` or `[0]`.
    var tagDescription: String {
        switch tagClass {
        case .universal:
            switch tagNumber {
            case 2: return "INTEGER"
            case 4: return "OCTET STRING"
            case 6: return "OBJECT IDENTIFIER"
            case 12: return "UTF8String"
            case 16: return "SEQUENCE"
            case 17: return "SET"
            default: return "universal \(tagNumber)"
            }
        case .application: return "[APPLICATION \(tagNumber)]"
        case .contextSpecific: return "[\(tagNumber)]"
        case .private: return "[PRIVATE \(tagNumber)]"
        }
    }
}

extension BERElement {
    /// Universal tag numbers used by receipts.
    enum Universal {
        static let integer: UInt32 = 2
        static let octetString: UInt32 = 4
        static let objectIdentifier: UInt32 = 6
        static let utf8String: UInt32 = 12
        static let sequence: UInt32 = 16
        static let set: UInt32 = 17
    }
}
