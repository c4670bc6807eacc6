import IAPCore
/// The body of an App Store Server API error response.
///
/// Mirrors Apple's `ErrorPayload`, with Apple's JSON names.
struct ErrorPayload: Decodable, Sendable {
    /// Apple's numeric error code, such as `4040010`.
    var errorCode: Int64?
    /// Apple's description of the error.
    var errorMessage: String?
}
