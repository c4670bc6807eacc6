extension Duration {
    /// The duration in seconds, with its fraction (what `Date.addingTimeInterval` and `Foundation` timeouts take).
    package var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole seconds, the fraction dropped (what JWT dates and libpq's `connect_timeout` take).
    package var wholeSeconds: Int64 {
        components.seconds
    }

    /// The duration in whole milliseconds, rounded down (what libpq's and libc's millisecond timeouts take).
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).overflow
            ? .max : product + attoseconds / 1_000_000_000_000_000
    }
}
