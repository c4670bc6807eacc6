import Foundation
import IAPCommandLine
import IAPCore

/// What the benchmarks share: medians, timed loops, the build they ran in, and how a report is printed.
enum Benchmark {
    /// `"debug"` or `"release"`: the build the figures come from.
    static var build: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }

    /// The median of `values` (0 for none).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// A rate and its samples, rounded: `{"perSecond": median, "samples": [...]}`.
    static func figures(_ samples: [Double]) -> [String: Any] {
        ["perSecond": median(samples).rounded(), "samples": samples.map { $0.rounded() }]
    }

    /// Runs `body` repeatedly for `seconds` and returns calls per second.
    static func rate(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let budget = Duration.milliseconds(Int64(seconds * 1000))
        let start = clock.now
        var count = 0
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<32 {
                try body()
            }
            count += 32
            elapsed = clock.now - start
        } while elapsed < budget
        return Double(count) / elapsed.timeInterval
    }

    /// Prints a report as JSON on standard output, its keys sorted.
    static func emit(
        _ report: [String: Any],
        options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys]
    ) throws {
        Output.write(try JSONSerialization.data(withJSONObject: report, options: options))
        Output.write("\n")
    }

    /// Runs `measure` in a new private temporary directory (removed afterwards), prints the report it returns as
    /// JSON and exits 0; on an error, prints it and exits 1.
    static func reportInTemporaryDirectory(prefix: String, _ measure: (URL) throws -> [String: Any]) -> Never {
        let directory = FileManager.default.temporaryDirectory.appending(path: "\(prefix)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o700]
            )
            let report = try measure(directory)
            try? FileManager.default.removeItem(at: directory)
            try emit(report, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            terminate(.success)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            Output.error("error: \(IAPError.wrapping(error, as: .internalError, "the benchmark failed").message)")
            terminate(.rejected)
        }
    }
}
