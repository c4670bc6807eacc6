public import IAPCore

/// The renewal information of a subscription in ``SimulatedAppStore``: its decoded payload and its JWS.
public struct SimulatedRenewalInfo: Sendable, Hashable {
    /// The renewal information as signed.
    public var payload: RenewalInfoPayload
    /// The compact JWS (`JWSRenewalInfo`) of ``payload``.
    public var signedRenewalInfo: String
    /// The status of the subscription, as the subscription status API reports it.
    public var status: SubscriptionStatus

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - payload: The renewal information as signed.
    ///   - signedRenewalInfo: The compact JWS of the payload.
    ///   - status: The status of the subscription.
    public init(payload: RenewalInfoPayload, signedRenewalInfo: String, status: SubscriptionStatus) {
        self.payload = payload
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
    }
}
