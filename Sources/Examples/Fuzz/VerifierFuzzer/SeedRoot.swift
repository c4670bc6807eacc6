/// The root certificate of the TestPKI that minted the committed seed corpus (`IAPFuzzVerifier --write-seeds`).
///
/// The fuzzer trusts it next to the PKI it generates at start, so that the committed tokens verify all the way
/// through. Its private key was never stored.
enum SeedRoot {
    static let base64 = [
        "MIICJjCCAcygAwIBAgIQat2VDWvSYQCMi8nDrXg4ADAKBggqhkjOPQQDAjBzMR8wHQYDVQQDDBZzd2lmdC1pYXAgdGVzdCBS",
        "b290IENBMS8wLQYDVQQLDCZzd2lmdC1pYXAgdGVzdCBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTESMBAGA1UECgwJc3dpZnQt",
        "aWFwMQswCQYDVQQGEwJVUzAeFw0yMDAxMDEwMDAwMDBaFw00MDAxMDEwMDAwMDBaMHMxHzAdBgNVBAMMFnN3aWZ0LWlhcCB0",
        "ZXN0IFJvb3QgQ0ExLzAtBgNVBAsMJnN3aWZ0LWlhcCB0ZXN0IENlcnRpZmljYXRpb24gQXV0aG9yaXR5MRIwEAYDVQQKDAlz",
        "d2lmdC1pYXAxCzAJBgNVBAYTAlVTMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAElZGWSUDZvPWlJtcFCo/4J+iTJMIcr1Oa",
        "w+QpRUYwZQCwPS2sIFt4wfO0VZEljDIIH4+c5necEZWjNG1gsaM3G6NCMEAwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8E",
        "BAMCAQYwHQYDVR0OBBYEFMRZWleUApVIhJlwatXtmf7tjriPMAoGCCqGSM49BAMCA0gAMEUCIDVYOrA5Fs0NrzchPBH4VmI7",
        "2zoviSQCyKTbAFRpFIP4AiEApEykWt/nP4Mf3nvj9mwhAY6N5QUQ0UYPZFz/GkKtujQ=",
    ].joined()
}
