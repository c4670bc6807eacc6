// The test kit is one import: the simulated App Store here, the in-memory stores, clocks and transports of
// IAPInMemory and the conformance suites of IAPConformance with it.
@_exported public import IAPConformance
@_exported public import IAPInMemory
