#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A client of Apple's deprecated `verifyReceipt` endpoint, for servers still moving off StoreKit 1.
///
/// The client posts `{"receipt-data", "password", "exclude-old-transactions"}` to production first and, when
/// Apple answers 21007 (a sandbox receipt), to the sandbox; a client made for the sandbox goes to production on
/// 21008. Any status other than 0 or 21006 throws ``IAPError`` with code `apiError`, the status in
/// ``IAPError/apiErrorCode`` and ``IAPError/isRetryable`` set for 21005, 21009 and 21100–21199. Nothing is
/// retried automatically.
///
/// Apple deprecated `verifyReceipt`. Use it only to migrate: take the `original_transaction_id`s from its answer
/// (``VerifyReceiptResponse/originalTransactionIds``) or from the receipt itself with ``LegacyReceipt``, and get
/// the signed transactions from IAPServerAPI's `AppStoreServerAPIClient`. See `Documentation/Migration.md`.
@available(
    *,
    deprecated,
    message:
        "Apple deprecated verifyReceipt: extract the transaction id with LegacyReceipt and use AppStoreServerAPIClient"
)
public final class VerifyReceiptClient: Sendable {
    /// `https://buy.itunes.apple.com/verifyReceipt`.
    public static let productionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// `https://sandbox.itunes.apple.com/verifyReceipt`.
    public static let sandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!

    private let engine: VerifyReceiptEngine

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - environment: `.production` (the default: Apple's advice is to try production first) or `.sandbox`.
    ///   - sharedSecret: The app's shared secret from App Store Connect; needed for auto-renewable subscriptions.
    ///   - transport: What sends the requests.
    ///   - productionURL: The production endpoint; Apple's by default.
    ///   - sandboxURL: The sandbox endpoint; Apple's by default.
    ///   - requestTimeout: How long one HTTP exchange may take.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` for another environment.
    public init(
        environment: AppStoreEnvironment = .production,
        sharedSecret: String?,
        transport: some Transport,
        productionURL: URL = VerifyReceiptClient.productionURL,
        sandboxURL: URL = VerifyReceiptClient.sandboxURL,
        requestTimeout: Duration = .seconds(30)
    ) throws {
        let first: VerifyReceiptEngine.Endpoint
        switch environment {
        case .production: first = .production
        case .sandbox: first = .sandbox
        default:
            throw IAPError(
                .invalidConfiguration,
                "verifyReceipt serves only Production and Sandbox, not \(environment)"
            )
        }
        self.engine = VerifyReceiptEngine(
            first: first,
            sharedSecret: sharedSecret,
            productionURL: productionURL,
            sandboxURL: sandboxURL,
            requestTimeout: requestTimeout,
            transport: transport
        )
    }

    /// Verifies a receipt with Apple, following the production ↔ sandbox redirect once.
    ///
    /// - Parameters:
    ///   - receiptData: The base64-encoded app receipt (or iOS 6-style transaction receipt).
    ///   - excludeOldTransactions: Whether `latest_receipt_info` holds only the latest renewal of each
    ///     subscription.
    /// - Returns: The answer, with status 0 or 21006.
    /// - Throws: ``IAPError``: `apiError` with the status in ``IAPError/apiErrorCode``, `decodingFailure`, or the
    ///   transport's `timeout`, `cancelled` or `transportFailure`.
    public func verifyReceipt(
        _ receiptData: String,
        excludeOldTransactions: Bool = false
    ) async throws -> VerifyReceiptResponse {
        try await engine.verify(receiptData: receiptData, excludeOldTransactions: excludeOldTransactions)
    }
}
