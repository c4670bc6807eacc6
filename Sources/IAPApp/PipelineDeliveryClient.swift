public import IAPCore
/// A ``DeliveryClient`` that delivers through a ``DeliveryPipeline`` in the same process: for single-process
/// apps and for tests.
public struct PipelineDeliveryClient: DeliveryClient {
    /// The pipeline every submission goes through.
    public let pipeline: DeliveryPipeline

    /// Creates a client over a pipeline.
    ///
    /// - Parameter pipeline: The pipeline.
    public init(pipeline: DeliveryPipeline) {
        self.pipeline = pipeline
    }

    /// Submits the transaction to the pipeline.
    ///
    /// - Parameter submission: The signed transaction and its context.
    /// - Returns: The pipeline's outcome.
    public func submit(_ submission: TransactionSubmission) async throws -> TransactionSubmissionResult {
        let outcome = await pipeline.submit(
            signedTransaction: submission.signedTransaction,
            userId: submission.userId,
            orderId: submission.orderId
        )
        return TransactionSubmissionResult(outcome)
    }
}
