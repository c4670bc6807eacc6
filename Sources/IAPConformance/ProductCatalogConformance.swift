public import IAPCore

/// The checks every ``ProductCatalog`` must pass.
///
/// The delivery pipeline trusts the catalog to say what a purchase grants, so a catalog that guesses a
/// product for an unknown id, lists a product twice, or answers differently for the same id in one breath
/// turns a configuration slip into wrong grants. A catalog proves itself against this suite:
/// `StaticProductCatalog`, and any catalog an integrator keeps in a database or fetches from a configuration
/// service. The suite imports neither XCTest nor Testing; it returns a ``ConformanceReport``.
///
/// Unlike the store suite, the checks run against the catalog as it is (with the integrator's products),
/// read-only, so `makeCatalog` may return the same instance every time.
///
/// ```swift
/// @Test func remoteCatalogConforms() async {
///     let report = await ProductCatalogConformance { try await RemoteCatalog(url: stagingURL) }.run()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
public struct ProductCatalogConformance: Sendable {
    /// One named check.
    private struct Check: Sendable {
        let name: String
        let requirement: String
        let body: @Sendable (any ProductCatalog) async throws -> Void
    }

    private let makeCatalog: @Sendable () async throws -> any ProductCatalog

    /// Creates the suite for one catalog.
    ///
    /// - Parameter makeCatalog: Returns the catalog to check (the same one each time is fine).
    public init(makeCatalog: @escaping @Sendable () async throws -> any ProductCatalog) {
        self.makeCatalog = makeCatalog
    }

    /// The names of every check, in the order ``run()`` runs them.
    public static var checkNames: [String] {
        checks.map(\.name)
    }

    /// Runs every check.
    ///
    /// - Returns: The report; ``ConformanceReport/failures`` is empty when the catalog conforms.
    public func run() async -> ConformanceReport {
        var report = ConformanceReport(suite: "ProductCatalog")
        for check in Self.checks {
            if let problems = await problems(running: check) {
                report.failures.append(
                    ConformanceReport.Failure(check: check.name, requirement: check.requirement, message: problems)
                )
            } else {
                report.passed.append(check.name)
            }
        }
        return report
    }

    private func problems(running check: Check) async -> String? {
        let catalog: any ProductCatalog
        do {
            catalog = try await makeCatalog()
        } catch {
            return "makeCatalog threw \(error); the check could not run"
        }
        do {
            try await check.body(catalog)
            return nil
        } catch let violation as ConformanceViolation {
            return violation.description
        } catch let error as IAPError {
            return "the catalog threw IAPError(.\(error.code)): \(error.message), where the contract expects an answer"
        } catch {
            return "the catalog threw \(type(of: error)): \(error); a catalog must throw only IAPError"
        }
    }

    private static let checks: [Check] = [
        Check(
            name: "listsEachProductOnce",
            requirement: "allProducts() lists at least one product, each with a non-empty, unique productId",
            body: { catalog in
                let products = try await catalog.allProducts()
                guard !products.isEmpty else {
                    throw ConformanceViolation("allProducts() returned no products; the suite needs a real catalog")
                }
                var seen = Set<String>()
                var problems: [String] = []
                for product in products {
                    if product.productId.isEmpty {
                        problems.append("a product has an empty productId")
                    } else if !seen.insert(product.productId).inserted {
                        problems.append("'\(product.productId)' is listed more than once")
                    }
                }
                if !problems.isEmpty { throw ConformanceViolation(problems: problems) }
            }
        ),
        Check(
            name: "answersEveryListedId",
            requirement: "product(id:) returns, for every listed id, the same product allProducts() lists",
            body: { catalog in
                var problems: [String] = []
                for listed in try await catalog.allProducts() {
                    do {
                        let answered = try await catalog.product(id: listed.productId)
                        if answered != listed {
                            problems.append(
                                "product(id: \"\(listed.productId)\") returned \(answered), but allProducts() lists \(listed)"
                            )
                        }
                    } catch let error as IAPError {
                        problems.append(
                            "product(id: \"\(listed.productId)\") threw .\(error.code) for a listed product"
                        )
                    }
                }
                if !problems.isEmpty { throw ConformanceViolation(problems: problems) }
            }
        ),
        Check(
            name: "rejectsUnknownIds",
            requirement:
                "product(id:) throws IAPError .unknownProduct naming the id for any id it does not list, "
                + "never a guessed product (ids compare exactly: case and white space count)",
            body: { catalog in
                let listed = Set(try await catalog.allProducts().map(\.productId))
                var probes = ["", " ", "com.example.not-in-any-catalog", "\u{0}", String(repeating: "x", count: 4096)]
                for id in listed.sorted().prefix(8) {
                    probes += [id.uppercased(), id.lowercased(), " \(id)", "\(id) ", "\(id).", "\(id)\u{200B}"]
                }
                var problems: [String] = []
                for probe in probes where !listed.contains(probe) {
                    do {
                        let product = try await catalog.product(id: probe)
                        problems.append(
                            "product(id: \(String(reflecting: probe))) returned '\(product.productId)' for an id the catalog does not list"
                        )
                    } catch let error as IAPError {
                        if error.code != .unknownProduct {
                            problems.append(
                                "product(id: \(String(reflecting: probe))) threw .\(error.code), not .unknownProduct"
                            )
                        } else if !probe.isEmpty, probe.count < 200, !error.message.contains(probe) {
                            problems.append(
                                "the .unknownProduct error for \(String(reflecting: probe)) does not name the id: \(error.message)"
                            )
                        }
                    }
                }
                if !problems.isEmpty { throw ConformanceViolation(problems: problems) }
            }
        ),
        Check(
            name: "describesEachKindCompletely",
            requirement:
                "auto-renewable subscriptions have a subscription group; consumables grant at least 1 unit; "
                + "non-renewing subscriptions have a duration; group levels are 1 or more",
            body: { catalog in
                var problems: [String] = []
                for product in try await catalog.allProducts() {
                    let id = product.productId
                    if product.kind == .autoRenewable, product.subscriptionGroupId?.isEmpty ?? true {
                        problems.append("the auto-renewable '\(id)' has no subscription group")
                    }
                    if product.kind == .consumable, product.unitsPerPurchase < 1 {
                        problems.append("the consumable '\(id)' grants \(product.unitsPerPurchase) units per purchase")
                    }
                    if product.kind == .nonRenewing, product.duration == nil {
                        problems.append("the non-renewing '\(id)' has no duration")
                    }
                    if let level = product.groupLevel, level < 1 {
                        problems.append("'\(id)' has group level \(level)")
                    }
                }
                if !problems.isEmpty { throw ConformanceViolation(problems: problems) }
            }
        ),
        Check(
            name: "answersConsistentlyUnderConcurrency",
            requirement: "200 concurrent product(id:) calls for listed ids all return the listed product",
            body: { catalog in
                let products = try await catalog.allProducts()
                guard !products.isEmpty else {
                    throw ConformanceViolation("allProducts() returned no products to ask for")
                }
                let mismatches = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<200 {
                        let expected = products[index % products.count]
                        group.addTask {
                            let answered = try await catalog.product(id: expected.productId)
                            return answered == expected ? nil : expected.productId
                        }
                    }
                    var found: [String] = []
                    for try await mismatch in group {
                        if let mismatch { found.append(mismatch) }
                    }
                    return found
                }
                if !mismatches.isEmpty {
                    throw ConformanceViolation(
                        "concurrent calls returned a different product for: "
                            + Set(mismatches).sorted().joined(separator: ", ")
                    )
                }
            }
        ),
    ]
}
