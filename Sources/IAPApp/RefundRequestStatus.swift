import IAPCore
/// What came of a refund request sheet: whether the request reached the App Store, not whether it refunds.
public enum RefundRequestStatus: String, Sendable, Hashable, Codable {
    /// The App Store received the request; a refund, if granted, arrives later as a revocation.
    case success
    /// The customer closed the sheet without sending a request.
    case userCancelled
}
