import IAPCore
/// The decoded app receipt in a `verifyReceipt` answer: its `receipt` object.
///
/// Apple's field names are kept in the JSON form; identifiers and dates (milliseconds since 1970) are strings.
public struct VerifyReceiptAppReceipt: Codable, Hashable, Sendable {
    /// `receipt_type`, such as `Production` or `ProductionSandbox`.
    public var receiptType: String?
    /// `bundle_id`.
    public var bundleId: String?
    /// `adam_id` (the App Apple ID), as a string.
    public var adamId: String?
    /// `application_version`.
    public var applicationVersion: String?
    /// `original_application_version`.
    public var originalApplicationVersion: String?
    /// `receipt_creation_date_ms`.
    public var receiptCreationDateMs: String?
    /// `original_purchase_date_ms`.
    public var originalPurchaseDateMs: String?
    /// `in_app`: the in-app purchases in the receipt.
    public var inApp: [VerifyReceiptTransaction]?

    enum CodingKeys: String, CodingKey {
        case receiptType = "receipt_type"
        case bundleId = "bundle_id"
        case adamId = "adam_id"
        case applicationVersion = "application_version"
        case originalApplicationVersion = "original_application_version"
        case receiptCreationDateMs = "receipt_creation_date_ms"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case inApp = "in_app"
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        receiptType: String? = nil,
        bundleId: String? = nil,
        adamId: String? = nil,
        applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil,
        receiptCreationDateMs: String? = nil,
        originalPurchaseDateMs: String? = nil,
        inApp: [VerifyReceiptTransaction]? = nil
    ) {
        self.receiptType = receiptType
        self.bundleId = bundleId
        self.adamId = adamId
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.receiptCreationDateMs = receiptCreationDateMs
        self.originalPurchaseDateMs = originalPurchaseDateMs
        self.inApp = inApp
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receiptType = try container.verifyReceiptString(forKey: .receiptType)
        bundleId = try container.verifyReceiptString(forKey: .bundleId)
        adamId = try container.verifyReceiptString(forKey: .adamId)
        applicationVersion = try container.verifyReceiptString(forKey: .applicationVersion)
        originalApplicationVersion = try container.verifyReceiptString(forKey: .originalApplicationVersion)
        receiptCreationDateMs = try container.verifyReceiptString(forKey: .receiptCreationDateMs)
        originalPurchaseDateMs = try container.verifyReceiptString(forKey: .originalPurchaseDateMs)
        inApp = try container.decodeIfPresent([VerifyReceiptTransaction].self, forKey: .inApp)
    }
}
