extension IAPError.Code {
    /// The codes of signed data that failed verification: not JWS, a wrong algorithm, certificate or chain, no Apple
    /// marker, a bad signature, another app's or environment's data, an unexpected payload. What a verifier throws,
    /// as opposed to a failure of the ledger or the network.
    public static let verificationFailures: Set<IAPError.Code> = [
        .malformedSignedData, .unsupportedAlgorithm, .certificateInvalid, .certificateChainInvalid, .untrustedRoot,
        .certificateExpired, .missingAppleMarker, .signatureInvalid, .bundleIdMismatch, .environmentMismatch,
        .appAppleIdMismatch, .unexpectedPayload, .unsignedEnvironmentRejected,
    ]

    /// Whether the code is one of ``verificationFailures``.
    public var isVerificationFailure: Bool {
        Self.verificationFailures.contains(self)
    }
}
