import IAPCore
import IAPConformance
import Testing

/// A `ProductCatalog` with one deliberate flaw, built on `StaticProductCatalog`, to prove that the
/// conformance suite is not vacuous. Never a model for a real catalog.
struct FlawedProductCatalog: ProductCatalog {
    /// The kinds of broken catalog the suite must catch, each with the checks it must fail.
    enum Flaw: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// An unknown id gets the first product.
        case guessesUnknownIds
        /// Ids are compared case-insensitively.
        case caseInsensitiveIds
        /// An unknown id throws `.invalidConfiguration`.
        case wrongErrorCode
        /// The first product is listed twice.
        case listsTwice
        /// `product(id:)` drops the entitlements.
        case answersDifferently
        /// A subscription without a group slips through.
        case subscriptionWithoutGroup

        var testDescription: String { rawValue }

        var expectedFailures: Set<String> {
            switch self {
            case .guessesUnknownIds, .caseInsensitiveIds, .wrongErrorCode: ["rejectsUnknownIds"]
            case .listsTwice: ["listsEachProductOnce"]
            case .answersDifferently: ["answersEveryListedId", "answersConsistentlyUnderConcurrency"]
            case .subscriptionWithoutGroup: ["describesEachKindCompletely"]
            }
        }
    }

    let flaw: Flaw
    let base: StaticProductCatalog
    static let loose = CatalogProduct(productId: "loose.monthly", kind: .autoRenewable)

    func product(id: String) async throws -> CatalogProduct {
        switch flaw {
        case .guessesUnknownIds:
            return base[productId: id] ?? base.products[0]
        case .caseInsensitiveIds:
            if let match = base.products.first(where: { $0.productId.lowercased() == id.lowercased() }) {
                return match
            }
            return try base.product(id: id)
        case .wrongErrorCode:
            guard let product = base[productId: id] else {
                throw IAPError(.invalidConfiguration, "no product \(id)")
            }
            return product
        case .answersDifferently:
            var product = try base.product(id: id)
            product.entitlements = []
            return product
        case .subscriptionWithoutGroup:
            return id == Self.loose.productId ? Self.loose : try base.product(id: id)
        case .listsTwice:
            return try base.product(id: id)
        }
    }

    func allProducts() async throws -> [CatalogProduct] {
        switch flaw {
        case .listsTwice:
            return base.products + [base.products[0]]
        case .subscriptionWithoutGroup:
            return base.products + [Self.loose]
        default:
            return base.products
        }
    }
}

@Suite struct ProductCatalogConformanceTests {
    static func catalog() throws -> StaticProductCatalog {
        try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlements: ["premium"]),
            CatalogProduct(
                productId: "pro.monthly",
                kind: .autoRenewable,
                subscriptionGroupId: "pro",
                groupLevel: 2,
                entitlements: ["premium"]
            ),
            CatalogProduct(
                productId: "season.pass",
                kind: .nonRenewing,
                entitlements: ["season"],
                duration: SubscriptionPeriod(value: 3, unit: .month)
            ),
        ])
    }

    @Test func staticCatalogPassesEveryCheck() async throws {
        let catalog = try Self.catalog()
        let report = await ProductCatalogConformance { catalog }.run()
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.passed == ProductCatalogConformance.checkNames)
        #expect(report.succeeded)
    }

    @Test(arguments: FlawedProductCatalog.Flaw.allCases)
    func flawedCatalogFailsExactlyItsChecks(_ flaw: FlawedProductCatalog.Flaw) async throws {
        let flawed = FlawedProductCatalog(flaw: flaw, base: try Self.catalog())
        let report = await ProductCatalogConformance { flawed }.run()
        #expect(Set(report.failedChecks) == flaw.expectedFailures, "\(report)")
        #expect(!report.succeeded)
    }

    @Test func anEmptyCatalogCannotPass() async throws {
        let empty = try StaticProductCatalog(products: [])
        let report = await ProductCatalogConformance { empty }.run()
        #expect(report.failedChecks.contains("listsEachProductOnce"))
        #expect(report.failedChecks.contains("answersConsistentlyUnderConcurrency"))
        #expect(!report.succeeded)
    }

    @Test func aCatalogThatCannotBeMadeIsReported() async {
        let report = await ProductCatalogConformance {
            throw IAPError(.invalidConfiguration, "the configuration service is down")
        }.run()
        #expect(report.failures.count == ProductCatalogConformance.checkNames.count)
        #expect(report.failures.allSatisfy { $0.message.contains("makeCatalog threw") })
    }
}
