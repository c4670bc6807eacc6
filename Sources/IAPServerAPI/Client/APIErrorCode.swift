public import IAPCore

/// A numeric error code of the App Store Server API: the `errorCode` of an error response body.
///
/// Mirrors Apple's `APIError` with all 87 documented codes, spelled as Apple's libraries spell them
/// (`transactionIdNotFound` is `4040010`, `TransactionIdNotFoundError`). A known code carries what Apple documents
/// about it: ``name``, ``httpStatus``, ``summary`` and ``isRetryable`` (whether the same request can succeed when
/// tried again). All of it comes from one table with a line per code, and a code made from its raw value or
/// decoded from Apple's answer finds its line by value.
///
/// The set is open: a code Apple adds later decodes, compares and re-encodes unchanged, and
/// `isKnown` is `false` for it. Never `switch` exhaustively over the known values.
public struct APIErrorCode: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int64
    /// Apple's documentation, for a code of the table; `nil` for one made from a raw value, which looks it up.
    private let documentation: Documentation?

    /// What Apple documents about a known code.
    private struct Documentation: Sendable {
        let name: String
        let summary: String
        let isRetryable: Bool
    }

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
        self.documentation = nil
    }

    /// A code of the table, with Apple's name and summary and whether Apple documents it as retryable.
    init(_ rawValue: Int64, _ name: String, _ summary: String, retryable: Bool = false) {
        self.rawValue = rawValue
        self.documentation = Documentation(name: name, summary: summary, isRetryable: retryable)
    }

    /// The table's documentation of every known code, by value.
    private static let documentationByValue: [Int64: Documentation] = Dictionary(
        uniqueKeysWithValues: allKnown.compactMap { code in code.documentation.map { (code.rawValue, $0) } }
    )

    private var known: Documentation? {
        documentation ?? Self.documentationByValue[rawValue]
    }

    /// Apple's name of the code, such as `TransactionIdNotFoundError`; `nil` for a code this version does not know.
    public var name: String? {
        known?.name
    }

    /// The HTTP status Apple documents with the code (the first three digits of its value); `nil` for a code this
    /// version does not know.
    public var httpStatus: Int? {
        known.map { _ in Int(rawValue / 10_000) }
    }

    /// Apple's one-sentence description of the code; `nil` for a code this version does not know.
    public var summary: String? {
        known?.summary
    }

    /// Whether the same request can succeed when tried again later.
    ///
    /// `true` for the four codes Apple documents as retryable (`4040002`, `4040004`, `4040006`, `5000001`), for
    /// ``rateLimitExceeded`` (wait for `Retry-After`), for ``generalInternal`` and for any other `5xxxxxx` code,
    /// known or not. Every other code asks for a different request: ``transactionIdNotFound`` and
    /// ``originalTransactionIdNotFound`` may still succeed in the other environment, which is not a retry.
    public var isRetryable: Bool {
        known?.isRetryable == true || (5_000_000..<6_000_000).contains(rawValue)
    }

    public static func == (lhs: APIErrorCode, rhs: APIErrorCode) -> Bool {
        lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue)
    }
}
