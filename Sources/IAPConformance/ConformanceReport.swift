/// The outcome of a conformance suite run: which checks passed, and what failed in the others.
///
/// A report is plain data, so any test framework can assert on it. With Swift Testing:
///
/// ```swift
/// let report = await EntitlementStoreConformance { MyRedisStore(url: freshDatabase()) }.run()
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
///
/// With XCTest, `XCTAssertTrue(report.succeeded, report.description)`.
public struct ConformanceReport: Sendable, Hashable, CustomStringConvertible {
    /// One check that failed.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// The name of the check, as listed in the suite's `checkNames`.
        public var check: String
        /// What the contract requires, in one sentence.
        public var requirement: String
        /// What the backend did instead; one line per problem found.
        public var message: String

        /// Creates a failure.
        public init(check: String, requirement: String, message: String) {
            self.check = check
            self.requirement = requirement
            self.message = message
        }

        /// The check, the requirement and the problems, on indented lines.
        public var description: String {
            let details = message.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "      \($0)" }
                .joined(separator: "\n")
            return "FAIL \(check)\n    requires: \(requirement)\n    found:\n\(details)"
        }
    }

    /// What was checked, such as `"EntitlementStore"`.
    public var suite: String
    /// The names of the checks that passed, in the order they ran.
    public var passed: [String]
    /// The checks that failed, in the order they ran.
    public var failures: [Failure]

    /// Creates a report.
    public init(suite: String, passed: [String] = [], failures: [Failure] = []) {
        self.suite = suite
        self.passed = passed
        self.failures = failures
    }

    /// Whether every check that ran passed (and at least one ran).
    public var succeeded: Bool {
        failures.isEmpty && !passed.isEmpty
    }

    /// The names of the checks that failed.
    public var failedChecks: [String] {
        failures.map(\.check)
    }

    /// A summary line, then every failure with its requirement and findings, then the passed checks.
    public var description: String {
        var lines = ["\(suite) conformance: \(passed.count) passed, \(failures.count) failed"]
        lines += failures.map(\.description)
        lines += passed.map { "pass \($0)" }
        return lines.joined(separator: "\n")
    }
}
