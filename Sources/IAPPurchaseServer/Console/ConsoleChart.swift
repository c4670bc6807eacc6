/// Bar charts as inline SVG, drawn by the server: a title, a y axis with its unit and three ticks, one bar per interval
/// with its label under it (at most ten labels, evenly spread), no script and nothing from another host. The numbers
/// themselves are in the table beside each chart.
enum ConsoleChart {
    static let width = 640.0
    static let height = 240.0
    private static let left = 70.0
    private static let right = 10.0
    private static let top = 30.0
    private static let bottom = 40.0

    /// One chart.
    ///
    /// - Parameters:
    ///   - title: What it shows, such as `Net revenue, USD`.
    ///   - unit: The y axis' unit, such as `USD` or `subscriptions`.
    ///   - labels: One label per bar (the interval's start).
    ///   - values: One value per bar.
    ///   - text: How a value is written on the axis.
    /// - Returns: The `<figure>` holding the SVG.
    static func bars(
        title: String,
        unit: String,
        labels: [String],
        values: [Double],
        text: (Double) -> String
    ) -> String {
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let minimum = min(values.min() ?? 0, 0)
        // Nothing but zeros still draws its zero at the bottom.
        let maximum = max(values.max() ?? 0, minimum + 1)
        let span = maximum - minimum
        func y(_ value: Double) -> Double { top + (maximum - value) / span * plotHeight }
        let escapedTitle = ConsoleHTML.escape(title)
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="\(id(title))" width="\(Int(width))" \
            height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <title id="\(id(title))">\(escapedTitle), by interval (\(ConsoleHTML.escape(unit)))</title>
            <text x="\(left)" y="16" font-size="13" font-weight="bold">\(escapedTitle)</text>
            <line x1="\(left)" y1="\(top)" x2="\(left)" y2="\(top + plotHeight)" stroke="#57606a"/>
            <line x1="\(left)" y1="\(y(0))" x2="\(left + plotWidth)" y2="\(y(0))" stroke="#57606a"/>
            <text x="12" y="\(top + plotHeight / 2)" transform="rotate(-90 12 \(top + plotHeight / 2))" \
            text-anchor="middle">\(ConsoleHTML.escape(unit))</text>

            """
        let middle = (minimum + maximum) / 2
        let ticks =
            text(middle) == text(minimum) || text(middle) == text(maximum)
            ? [minimum, maximum] : [minimum, middle, maximum]
        for tick in ticks {
            svg += """
                <text x="\(left - 4)" y="\(y(tick) + 4)" text-anchor="end">\(ConsoleHTML.escape(text(tick)))</text>
                <line x1="\(left - 3)" y1="\(y(tick))" x2="\(left)" y2="\(y(tick))" stroke="#57606a"/>

                """
        }
        let count = max(values.count, 1)
        let slot = plotWidth / Double(count)
        let every = max(1, (count + 9) / 10)
        for (index, value) in values.enumerated() {
            let x = left + slot * Double(index) + slot * 0.15
            let barTop = min(y(value), y(0))
            let barHeight = abs(y(value) - y(0))
            svg += """
                <rect x="\(Self.number(x))" y="\(Self.number(barTop))" width="\(Self.number(max(slot * 0.7, 1)))" \
                height="\(Self.number(barHeight))" fill="#2f6feb"/>

                """
            if index % every == 0 {
                svg += """
                    <text x="\(x + slot * 0.35)" y="\(top + plotHeight + 14)" text-anchor="middle">\
                    \(ConsoleHTML.escape(labels[index]))</text>

                    """
            }
        }
        svg += "</svg>"
        return "<figure>\(svg)<figcaption>\(escapedTitle)</figcaption></figure>"
    }

    /// The most intervals a chart draws: a quarter by day; the table holds any number.
    static let maximumBars = 93

    /// A coordinate with one decimal, to keep the page small.
    static func number(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }

    /// An id for the chart's title, from its words.
    private static func id(_ title: String) -> String {
        "chart-"
            + String(
                title.lowercased().unicodeScalars.map {
                    $0.properties.isAlphabetic || ("0"..."9").contains($0) ? Character($0) : "-"
                }
            )
    }
}
