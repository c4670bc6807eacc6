import Foundation
import IAPCommandLine
import IAPInMemory
import IAPTesting

/// Prints the demo's story as it happens: sections, dated events and indented details, dated by the story's clock.
struct DemoTimeline: Sendable {
    /// The clock the story moves.
    let clock: ManualClock
    /// Whether the story is told: `false` when it replays against the ledger of an earlier run, whose
    /// narrative would tell what that run did rather than what this one finds.
    var told = true

    /// A heading, printed whether or not the story is told.
    static func heading(_ title: String) {
        Output.line("")
        Output.line(title)
        Output.line(String(repeating: "─", count: title.count))
    }

    /// A section heading.
    func section(_ title: String) {
        if told {
            Self.heading(title)
        }
    }

    /// An undated line.
    func note(_ text: String) {
        if told {
            Output.line("  \(text)")
        }
    }

    /// A dated event of one actor.
    func event(_ actor: String, _ text: String) {
        if told {
            Output.line("  \(stamp(clock.now))  \(actor.padding(toLength: 6, withPad: " ", startingAt: 0))  \(text)")
        }
    }

    /// A detail of the last event.
    func detail(_ text: String) {
        if told {
            Output.line("  \(String(repeating: " ", count: 12))  \(String(repeating: " ", count: 6))    \(text)")
        }
    }

    /// A date as `Jan 05 09:00` (UTC), or with seconds.
    func stamp(_ date: Date, seconds: Bool = false) -> String {
        let parts = Calendar.utc.dateComponents([.month, .day, .hour, .minute, .second], from: date)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let month = months[((parts.month ?? 1) - 1) % 12]
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        let day = String(format: "%02d", parts.day ?? 0)
        return "\(month) \(day) \(time)" + (seconds ? String(format: ":%02d", parts.second ?? 0) : "")
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC.
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }
}
