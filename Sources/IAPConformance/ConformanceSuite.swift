import IAPCore

/// What the store suites other than ``EntitlementStoreConformance`` share: named checks, each run against a fresh
/// subject, and the report.
struct ConformanceSuite<Subject: Sendable>: Sendable {
    /// One named check.
    struct Check: Sendable {
        /// The stable name callers pass to `check(named:)`.
        let name: String
        /// What the contract requires, in one sentence, for the report.
        let requirement: String
        /// Runs the check against a fresh subject; throws ``ConformanceViolation`` when the subject breaks the
        /// requirement.
        let body: @Sendable (Subject) async throws -> Void
    }

    /// The suite's name in reports, such as `"RenewalExtensionStore"`.
    let name: String
    /// What a subject is called in messages, such as `"store"`.
    let noun: String
    /// Every check, in the order ``run(making:)`` runs them.
    let checks: [Check]

    /// The names of every check.
    var checkNames: [String] {
        checks.map(\.name)
    }

    /// Runs every check, each against a subject of its own.
    func run(making make: @Sendable () async throws -> Subject) async -> ConformanceReport {
        await run(checks, making: make)
    }

    /// Runs the check with the given name, or reports that there is none.
    func check(named checkName: String, making make: @Sendable () async throws -> Subject) async -> ConformanceReport {
        guard let check = checks.first(where: { $0.name == checkName }) else {
            let failure = ConformanceReport.Failure(
                check: checkName,
                requirement: "a check of that name exists",
                message: "there is no check named \"\(checkName)\"; the checks are: "
                    + checkNames.joined(separator: ", ")
            )
            return ConformanceReport(suite: name, failures: [failure])
        }
        return await run([check], making: make)
    }

    private func run(_ checks: [Check], making make: @Sendable () async throws -> Subject) async -> ConformanceReport {
        var report = ConformanceReport(suite: name)
        for check in checks {
            if let problems = await problems(running: check, making: make) {
                report.failures.append(
                    ConformanceReport.Failure(check: check.name, requirement: check.requirement, message: problems)
                )
            } else {
                report.passed.append(check.name)
            }
        }
        return report
    }

    /// Runs one check against a fresh subject; returns what went wrong, or `nil` if it passed.
    private func problems(running check: Check, making make: @Sendable () async throws -> Subject) async -> String? {
        let subject: Subject
        do {
            subject = try await make()
        } catch {
            return "making the \(noun) threw \(error); the check could not run"
        }
        do {
            try await check.body(subject)
            return nil
        } catch let violation as ConformanceViolation {
            return violation.description
        } catch let error as IAPError {
            return "the \(noun) threw IAPError(.\(error.code)): \(error.message), on input the contract accepts"
        } catch {
            return "the \(noun) threw \(type(of: error)): \(error); a \(noun) must throw only IAPError"
        }
    }
}
