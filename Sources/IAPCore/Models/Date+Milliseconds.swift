#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension Date {
    /// Creates a date from a number of milliseconds since 1970-01-01T00:00:00Z, the App Store's unit.
    ///
    /// - Parameter millisecondsSince1970: Milliseconds since the Unix epoch; negative values are before it.
    public init(millisecondsSince1970: Int64) {
        self.init(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
    }

    /// The date as a whole number of milliseconds since 1970-01-01T00:00:00Z, rounded to the nearest.
    ///
    /// Dates beyond what an `Int64` can count are clamped to `Int64.min` or `Int64.max`; no date decoded by
    /// ``AppStoreJSON`` comes near them.
    public var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        if milliseconds.isNaN {
            return 0
        }
        if milliseconds >= 0x1p63 {
            return .max
        }
        if milliseconds < -0x1p63 {
            return .min
        }
        return Int64(milliseconds)
    }
}
