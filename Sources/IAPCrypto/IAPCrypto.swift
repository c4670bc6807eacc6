/// The namespace of the OpenSSL-backed cryptography.
public enum IAPCrypto {}
