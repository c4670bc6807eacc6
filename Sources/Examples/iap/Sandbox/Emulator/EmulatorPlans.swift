import Foundation
import IAPCore
import IAPTesting

/// The subscription offers and commitment plans of `iap emulate`: the built-in ones, or a `--plans` file.
///
/// ```json
/// {
///   "offers": [
///     {"id": "trial", "productId": "plus.monthly", "type": "introductory", "discountType": "FREE_TRIAL",
///      "price": 0, "period": "P1W", "periodCount": 1}
///   ],
///   "commitments": {"studio.monthly": 12}
/// }
/// ```
struct EmulatorPlans: Sendable, Hashable {
    var offers: [SimulatedSubscriptionOffer] = []
    var commitments: [String: Int] = [:]

    private struct File: Decodable {
        struct Offer: Decodable {
            var id: String
            var productId: String
            var type: String
            var discountType: String
            var price: Int64
            var period: String?
            var periodCount: Int?
        }

        var offers: [Offer]?
        var commitments: [String: Int]?
    }

    /// The plans of the built-in catalog: `plus.monthly` has an introductory week free, a promotional offer (three
    /// months at 4.99), an offer code (a month free) and a win-back offer (a month free); `plus.yearly` a
    /// promotional offer paid up front (a year at 59.99); `studio.monthly` is billed monthly with a 12-month
    /// commitment.
    static let builtIn = EmulatorPlans(
        offers: [
            SimulatedSubscriptionOffer(
                id: "plus.monthly.trial",
                productId: "plus.monthly",
                kind: .introductory,
                discountType: .freeTrial,
                price: 0,
                period: SubscriptionPeriod(value: 1, unit: .week)
            ),
            SimulatedSubscriptionOffer(
                id: "plus.monthly.promo",
                productId: "plus.monthly",
                kind: .promotional,
                discountType: .payAsYouGo,
                price: 4_990,
                period: SubscriptionPeriod(value: 1, unit: .month),
                periodCount: 3
            ),
            SimulatedSubscriptionOffer(
                id: "plus.monthly.code",
                productId: "plus.monthly",
                kind: .offerCode,
                discountType: .freeTrial,
                price: 0,
                period: SubscriptionPeriod(value: 1, unit: .month)
            ),
            SimulatedSubscriptionOffer(
                id: "plus.monthly.winback",
                productId: "plus.monthly",
                kind: .winBack,
                discountType: .freeTrial,
                price: 0,
                period: SubscriptionPeriod(value: 1, unit: .month)
            ),
            SimulatedSubscriptionOffer(
                id: "plus.yearly.promo",
                productId: "plus.yearly",
                kind: .promotional,
                discountType: .payUpFront,
                price: 59_990,
                period: SubscriptionPeriod(value: 1, unit: .year)
            ),
        ],
        commitments: ["studio.monthly": 12]
    )

    /// Reads a `--plans` file and checks it against the products the store sells.
    ///
    /// - Throws: ``IAPError`` `.invalidConfiguration` naming the first problem.
    static func load(_ url: URL, products: [CatalogProduct]) throws -> EmulatorPlans {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw IAPError(.invalidConfiguration, "cannot read --plans \(url.path): \(error.localizedDescription)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw IAPError(
                .invalidConfiguration,
                "--plans \(url.path) is not {\"offers\": [...], \"commitments\": {...}}: \(error)"
            )
        }
        return try plans(file, products: products, source: url.path)
    }

    private static func plans(_ file: File, products: [CatalogProduct], source: String) throws -> EmulatorPlans {
        let subscriptions = Set(products.filter { $0.kind == .autoRenewable }.map(\.productId))
        func fail(_ message: String) -> IAPError {
            IAPError(.invalidConfiguration, "--plans \(source): \(message)")
        }
        var plans = EmulatorPlans()
        var seen: Set<[String]> = []
        for (index, entry) in (file.offers ?? []).enumerated() {
            let name = "offers[\(index)]"
            guard subscriptions.contains(entry.productId) else {
                throw fail("\(name): '\(entry.productId)' is not an auto-renewable subscription of the catalog")
            }
            guard !entry.id.isEmpty, seen.insert([entry.productId, entry.id]).inserted else {
                throw fail("\(name): the id '\(entry.id)' is empty or appears twice for \(entry.productId)")
            }
            let kind: SimulatedSubscriptionOffer.Kind
            switch entry.type {
            case "introductory": kind = .introductory
            case "promotional": kind = .promotional
            case "offerCode": kind = .offerCode
            case "winBack": kind = .winBack
            default: throw fail("\(name): type must be introductory, promotional, offerCode or winBack")
            }
            let discountType = OfferDiscountType(rawValue: entry.discountType)
            guard [.freeTrial, .payAsYouGo, .payUpFront].contains(discountType) else {
                throw fail("\(name): discountType must be FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT")
            }
            guard entry.price >= 0, entry.price <= 10_000_000_000, discountType != .freeTrial || entry.price == 0
            else {
                throw fail("\(name): price must be milliunits from 0 (0 for FREE_TRIAL)")
            }
            let period = try entry.period.map { text in
                guard let period = SubscriptionPeriod(iso8601: text) else {
                    throw fail("\(name): period '\(text)' is not a period such as P3D, P1W, P1M or P1Y")
                }
                return period
            }
            let count = entry.periodCount ?? 1
            guard (1...12).contains(count) else {
                throw fail("\(name): periodCount must be 1...12")
            }
            plans.offers.append(
                SimulatedSubscriptionOffer(
                    id: entry.id,
                    productId: entry.productId,
                    kind: kind,
                    discountType: discountType,
                    price: entry.price,
                    period: period,
                    periodCount: count
                )
            )
        }
        for (productId, length) in (file.commitments ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard subscriptions.contains(productId) else {
                throw fail("commitments: '\(productId)' is not an auto-renewable subscription of the catalog")
            }
            guard (2...36).contains(length) else {
                throw fail("commitments: \(productId) must last 2...36 billing periods")
            }
            plans.commitments[productId] = length
        }
        return plans
    }
}
