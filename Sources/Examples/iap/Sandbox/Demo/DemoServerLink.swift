import IAPApp
import IAPCore

/// The app's way to the demo's server: the pipeline in this process, behind a switch that makes the server
/// unreachable, as a network outage or a server restart would.
final class DemoServerLink: DeliveryClient {
    private let server: PipelineDeliveryClient
    private let reachable = LockedValue(true)

    init(pipeline: DeliveryPipeline) {
        server = PipelineDeliveryClient(pipeline: pipeline)
    }

    /// Cuts the app off from the server, or reconnects it.
    func setReachable(_ value: Bool) {
        reachable.withLock { $0 = value }
    }

    func submit(_ submission: TransactionSubmission) async throws -> TransactionSubmissionResult {
        guard reachable.withLock({ $0 }) else {
            throw IAPError(.transportFailure, "the server did not answer", isRetryable: true)
        }
        return try await server.submit(submission)
    }
}
