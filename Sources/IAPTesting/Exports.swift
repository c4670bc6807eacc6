// The test kit is one import: the simulated App Store here, the in-memory stores, clocks and conformance suites of
// IAPInMemory with it.
@_exported public import IAPInMemory
