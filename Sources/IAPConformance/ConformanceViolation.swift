/// What a check found wrong: one line per problem.
struct ConformanceViolation: Error, CustomStringConvertible {
    /// The problems, each a sentence an implementer can act on.
    var problems: [String]

    /// A violation with one problem.
    init(_ problem: String) {
        self.problems = [problem]
    }

    /// A violation with several problems.
    init(problems: [String]) {
        self.problems = problems
    }

    var description: String {
        problems.joined(separator: "\n")
    }
}
