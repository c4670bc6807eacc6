import IAPCore
/// A `status` of Apple's deprecated `verifyReceipt` endpoint.
public struct VerifyReceiptStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number Apple sends.
    public var rawValue: Int

    /// Creates a status from its number.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// 0: the receipt is valid.
    public static let valid = VerifyReceiptStatus(rawValue: 0)
    /// 21000: the request was not an HTTP POST.
    public static let notPost = VerifyReceiptStatus(rawValue: 21000)
    /// 21002: the receipt data was malformed, or the service had a temporary issue.
    public static let malformedReceiptData = VerifyReceiptStatus(rawValue: 21002)
    /// 21003: the receipt could not be authenticated.
    public static let receiptNotAuthenticated = VerifyReceiptStatus(rawValue: 21003)
    /// 21004: the shared secret does not match the one on file.
    public static let sharedSecretMismatch = VerifyReceiptStatus(rawValue: 21004)
    /// 21005: the receipt server was temporarily unable to provide the receipt.
    public static let receiptServerUnavailable = VerifyReceiptStatus(rawValue: 21005)
    /// 21006: the receipt is valid but the subscription has expired (iOS 6-style receipts only); the answer
    /// carries the receipt.
    public static let subscriptionExpired = VerifyReceiptStatus(rawValue: 21006)
    /// 21007: a sandbox receipt was sent to production.
    public static let sandboxReceiptSentToProduction = VerifyReceiptStatus(rawValue: 21007)
    /// 21008: a production receipt was sent to the sandbox.
    public static let productionReceiptSentToSandbox = VerifyReceiptStatus(rawValue: 21008)
    /// 21009: an internal data access error.
    public static let internalDataAccessError = VerifyReceiptStatus(rawValue: 21009)
    /// 21010: the user account cannot be found or has been deleted.
    public static let accountNotFound = VerifyReceiptStatus(rawValue: 21010)

    /// Whether the answer carries a usable receipt: 0, and 21006 (valid, subscription expired).
    public var carriesReceipt: Bool {
        self == .valid || self == .subscriptionExpired
    }

    /// Whether the same request may succeed later: 21005, 21009 and the internal errors 21100–21199.
    public var isRetryable: Bool {
        self == .receiptServerUnavailable || self == .internalDataAccessError || (21100...21199).contains(rawValue)
    }

    /// Apple's explanation, or a generic one.
    public var summary: String {
        switch rawValue {
        case 0: return "The receipt is valid."
        case 21000: return "The request to the App Store was not made using the HTTP POST request method."
        case 21002: return "The data in the receipt-data property was malformed or the service had a temporary issue."
        case 21003: return "The receipt could not be authenticated."
        case 21004: return "The shared secret does not match the shared secret on file for the account."
        case 21005: return "The receipt server was temporarily unable to provide the receipt."
        case 21006: return "The receipt is valid but the subscription has expired."
        case 21007: return "This receipt is from the test environment but was sent to production."
        case 21008: return "This receipt is from the production environment but was sent to the test environment."
        case 21009: return "Internal data access error."
        case 21010: return "The user account cannot be found or has been deleted."
        case 21100...21199: return "Internal data access error."
        default: return "Unknown status."
        }
    }

    public var description: String {
        "\(rawValue)"
    }
}
