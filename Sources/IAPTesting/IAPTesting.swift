/// The namespace of the in-memory fakes and conformance suites.
public enum IAPTesting {}
