public import IAPCore
/// The app's way to hand a purchase to its server, which delivers it through a ``DeliveryPipeline``.
///
/// ``HTTPDeliveryClient`` posts to `POST /iap/v1/transactions` (answered on the server by
/// ``TransactionSubmissionHandler``); ``PipelineDeliveryClient`` calls a pipeline in the same process.
///
/// ## Implementation requirements
/// - Return a ``TransactionSubmissionResult`` for every answer the server gave, rejections included; throw only
///   when no answer arrived (``IAPError`` `transportFailure`, `timeout`, `cancelled`, retryable), so that the
///   caller keeps the purchase and submits it again.
/// - Never report an outcome the server did not give: ``TransactionSubmissionResult/finish`` is what the app
///   finishes the StoreKit transaction on.
/// - Safe to call from many tasks at once; the same submission may be sent more than once.
public protocol DeliveryClient: Sendable {
    /// Submits a signed transaction for delivery.
    ///
    /// - Parameter submission: The signed transaction and its context.
    /// - Returns: The server's outcome.
    /// - Throws: ``IAPError`` when no answer arrived.
    func submit(_ submission: TransactionSubmission) async throws -> TransactionSubmissionResult
}
