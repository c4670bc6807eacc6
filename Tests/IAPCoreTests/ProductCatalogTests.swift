import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct StaticProductCatalogTests {
    private let products = [
        CatalogProduct(productId: "coins", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
        CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlements: ["premium"]),
        CatalogProduct(productId: "monthly", kind: .autoRenewable, subscriptionGroupId: "g", entitlements: ["premium"]),
        CatalogProduct(productId: "pass", kind: .nonRenewing, duration: SubscriptionPeriod(value: 3, unit: .month)),
    ]

    @Test func answersLookupsSynchronouslyAndThroughTheProtocol() async throws {
        let catalog = try StaticProductCatalog(products: products)

        #expect(catalog.count == 4)
        #expect(catalog.products.map(\.productId) == ["coins", "lifetime", "monthly", "pass"])
        #expect(catalog[productId: "coins"]?.unitsPerPurchase == 100)
        #expect(catalog[productId: "nope"] == nil)
        #expect(catalog.storeKitSettings == nil)

        let asProtocol: any ProductCatalog = catalog
        #expect(try await asProtocol.product(id: "monthly").subscriptionGroupId == "g")
        #expect(try await asProtocol.allProducts() == products)
    }

    @Test func unknownProductNamesTheIdAndTheCatalogSize() throws {
        let catalog = try StaticProductCatalog(products: products)

        let error = try #require(throws: IAPError.self) { try catalog.product(id: "com.example.missing") }
        #expect(error.code == .unknownProduct)
        #expect(error.message.contains("'com.example.missing'"))
        #expect(error.message.contains("4 products"))
    }

    @Test func duplicateIdsAreRejectedNamingTheId() throws {
        let duplicate = products + [CatalogProduct(productId: "lifetime", kind: .nonConsumable)]

        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(products: duplicate) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("'lifetime'"))
        #expect(error.message.contains("twice"))
    }

    @Test(arguments: [
        (CatalogProduct(productId: "", kind: .nonConsumable), "empty product id"),
        (CatalogProduct(productId: "  ", kind: .nonConsumable), "empty product id"),
        (CatalogProduct(productId: "c", kind: .consumable, unitsPerPurchase: 0), "unitsPerPurchase 0"),
        (CatalogProduct(productId: "s", kind: .autoRenewable), "without a subscriptionGroupId"),
        (
            CatalogProduct(productId: "s", kind: .autoRenewable, subscriptionGroupId: ""),
            "without a subscriptionGroupId"
        ),
        (CatalogProduct(productId: "n", kind: .nonRenewing), "without a duration"),
        (CatalogProduct(productId: "s", kind: .autoRenewable, subscriptionGroupId: "g", groupLevel: 0), "groupLevel 0"),
    ])
    func invalidProductsAreRejectedWithAReason(product: CatalogProduct, reason: String) throws {
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(products: [product]) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test func catalogProductDecodesWithoutOptionalKeys() throws {
        let json = #"{"productId":"p","kind":"nonConsumable"}"#
        let product = try JSONDecoder().decode(CatalogProduct.self, from: Data(json.utf8))

        #expect(product == CatalogProduct(productId: "p", kind: .nonConsumable))
        #expect(product.familyShareable == false)
        let encoded = try JSONEncoder().encode(products)
        #expect(try JSONDecoder().decode([CatalogProduct].self, from: encoded) == products)
    }
}

@Suite struct CatalogFileTests {
    @Test func loadsTheDocumentedExample() throws {
        let catalog = try StaticProductCatalog(contentsOf: Fixture.url("catalog.v1", fileExtension: "json"))

        #expect(catalog.storeKitSettings == nil)
        #expect(
            catalog.products == [
                CatalogProduct(
                    productId: "com.example.coins100",
                    kind: .consumable,
                    entitlements: [],
                    unitsPerPurchase: 100,
                    displayName: "100 coins"
                ),
                CatalogProduct(
                    productId: "com.example.lifetime",
                    kind: .nonConsumable,
                    entitlements: ["premium", "themes"],
                    familyShareable: true
                ),
                CatalogProduct(
                    productId: "com.example.premium.monthly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "premium",
                    groupLevel: 2,
                    entitlements: ["premium"],
                    duration: SubscriptionPeriod(value: 1, unit: .month)
                ),
                CatalogProduct(
                    productId: "com.example.premium.yearly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "premium",
                    groupLevel: 1,
                    entitlements: ["premium"],
                    duration: SubscriptionPeriod(value: 1, unit: .year)
                ),
                CatalogProduct(
                    productId: "com.example.season.pass",
                    kind: .nonRenewing,
                    entitlements: ["season"],
                    duration: SubscriptionPeriod(value: 3, unit: .month)
                ),
            ]
        )
    }

    @Test func missingEntitlementsDefaultToTheProductIdAndUnknownKeysAreIgnored() throws {
        let json = #"{"version":1,"extra":true,"products":[{"productId":"p","type":"nonConsumable","note":"x"}]}"#
        let catalog = try StaticProductCatalog(jsonData: Data(json.utf8))

        #expect(catalog[productId: "p"]?.entitlements == ["p"])
        #expect(catalog[productId: "p"]?.unitsPerPurchase == 1)
    }

    @Test(arguments: [
        (
            #"{"version":1,"products":[{"productId":"a","type":"consumable"},{"type":"consumable"}]}"#,
            "'products[1].productId'"
        ),
        (#"{"version":1,"products":[{"productId":"a","type":"subscription"}]}"#, "'products[0].type'"),
        (
            #"{"version":1,"products":[{"productId":"a","type":"nonRenewing","duration":"1 month"}]}"#,
            "'products[0].duration'"
        ),
        (
            #"{"version":1,"products":[{"productId":"a","type":"consumable","unitsPerPurchase":"ten"}]}"#,
            "'products[0].unitsPerPurchase'"
        ),
        (#"{"version":1}"#, "'products'"),
        (#"{"products":[]}"#, "'version'"),
        (#"{"version":"1","products":[]}"#, "'version'"),
        (#"[1, 2]"#, "the top level"),
        ("not json", "malformed"),
    ])
    func malformedFilesNameThePathOfTheBadValue(json: String, expected: String) throws {
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(json.utf8)) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("malformed"), "\(error.message)")
        #expect(error.message.contains(expected), "\(error.message)")
    }

    @Test func unsupportedVersionNamesTheSupportedOne() throws {
        let json = #"{"version":2,"products":[]}"#
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(json.utf8)) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("version 2"))
        #expect(error.message.contains("reads version 1"))
    }

    @Test func invalidProductsInAFileAreRejected() throws {
        let json = #"{"version":1,"products":[{"productId":"pass","type":"nonRenewing"}]}"#
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(json.utf8)) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("'pass'"))
        #expect(error.message.contains("without a duration"))

        let fixed = try StaticProductCatalog(
            jsonData: Data(json.utf8),
            nonRenewingDurations: ["pass": SubscriptionPeriod(value: 7, unit: .day)]
        )
        #expect(fixed[productId: "pass"]?.duration == SubscriptionPeriod(value: 7, unit: .day))
    }

    @Test func unreadableFileIsAConfigurationError() throws {
        let url = URL(fileURLWithPath: "/nonexistent/swift-iap/catalog.json")
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(contentsOf: url) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("/nonexistent/swift-iap/catalog.json"))
    }
}

@Suite struct StoreKitConfigurationTests {
    private static func storeKitData(_ name: String) throws -> Data {
        try Data(contentsOf: Fixture.url(name, fileExtension: "storekit"))
    }

    @Test func loadsVersion5() throws {
        let catalog = try StaticProductCatalog(jsonData: Self.storeKitData("revenuecat-UnitTestsConfiguration.v5"))
        try expectUnitTestsConfiguration(catalog)
    }

    @Test func loadsVersion4() throws {
        let catalog = try StaticProductCatalog(
            jsonData: Self.storeKitData("revenuecat-UnitTestsConfiguration.v4-edited")
        )
        try expectUnitTestsConfiguration(catalog)
    }

    private func expectUnitTestsConfiguration(_ catalog: StaticProductCatalog) throws {
        #expect(
            catalog.products.map(\.productId) == [
                "lifetime",
                "com.revenuecat.consumable",
                "com.revenuecat.non_renewable",
                "com.revenuecat.monthly_4.99.1_week_intro",
                "com.revenuecat.annual_39.99.2_week_intro",
                "com.revenuecat.annual_with_commitment",
                "com.revenuecat.annual_39.99_no_trial",
            ]
        )
        let lifetime = try #require(catalog[productId: "lifetime"])
        #expect(lifetime.kind == .nonConsumable)
        #expect(lifetime.displayName == "Lifetime subscription")
        #expect(lifetime.familyShareable)
        #expect(lifetime.entitlements == ["lifetime"])

        let consumable = try #require(catalog[productId: "com.revenuecat.consumable"])
        #expect(consumable.kind == .consumable)
        #expect(consumable.unitsPerPurchase == 1)
        #expect(!consumable.familyShareable)

        let nonRenewing = try #require(catalog[productId: "com.revenuecat.non_renewable"])
        #expect(nonRenewing.kind == .nonRenewing)
        #expect(nonRenewing.duration == SubscriptionPeriod(value: 1, unit: .month))

        let monthly = try #require(catalog[productId: "com.revenuecat.monthly_4.99.1_week_intro"])
        #expect(monthly.kind == .autoRenewable)
        #expect(monthly.subscriptionGroupId == "7096FF06")
        #expect(monthly.groupLevel == 1)
        #expect(monthly.duration == SubscriptionPeriod(value: 1, unit: .month))
        #expect(monthly.displayName == "Monthly Free Trial")

        // An empty localized name falls back to the reference name.
        let commitment = try #require(catalog[productId: "com.revenuecat.annual_with_commitment"])
        #expect(commitment.displayName == "sub with 12mo monthly commitment")
        #expect(commitment.duration == SubscriptionPeriod(value: 1, unit: .year))

        #expect(catalog[productId: "com.revenuecat.annual_39.99_no_trial"]?.subscriptionGroupId == "4BB746BD")

        let settings = try #require(catalog.storeKitSettings)
        #expect(settings == StoreKitConfigurationSettings())
        #expect(settings.locale == "en_US")
        #expect(settings.storefront == "USA")
        #expect(settings.timeRate == 0)
    }

    @Test func loadsVersion3SyncedConfiguration() throws {
        let catalog = try StaticProductCatalog(
            jsonData: Self.storeKitData("revenuecat-PurchaseTesterStoreKitConfiguration.v3")
        )

        #expect(catalog.count == 16)
        #expect(catalog.products.filter { $0.kind == .autoRenewable }.count == 13)
        #expect(Set(catalog.products.compactMap(\.subscriptionGroupId)).count == 6)

        let coins = try #require(catalog[productId: "com.revenuecat.purchaseTester.500coins.1.99"])
        #expect(coins.kind == .consumable)
        #expect(coins.displayName == "500 coins")

        let monthly = try #require(catalog[productId: "greenie_monthly"])
        #expect(monthly.subscriptionGroupId == "21331777")
        #expect(monthly.groupLevel == 2)
        #expect(catalog[productId: "greenie_annual"]?.groupLevel == 1)
        #expect(catalog[productId: "test_refname2"]?.duration == SubscriptionPeriod(value: 2, unit: .month))
        #expect(catalog[productId: "test_product1"]?.duration == SubscriptionPeriod(value: 1, unit: .week))
        #expect(catalog[productId: "P2"]?.displayName == "deema_test_1")

        // No _askToBuyEnabled, _timeRate, ... in this file: SKTestSession's defaults; all nine errors disabled.
        let settings = try #require(catalog.storeKitSettings)
        #expect(settings == StoreKitConfigurationSettings(locale: "en_US", storefront: "USA"))
        #expect(settings.failingStoreKitAPIs.isEmpty)
    }

    @Test func keepsTheSettingsASimulatorNeeds() throws {
        let json = #"""
            {"version":{"major":5,"minor":0},"settings":{"_askToBuyEnabled":true,"_billingGracePeriodEnabled":true,
             "_billingIssuesEnabled":true,"_renewalBillingIssuesEnabled":true,"_failTransactionsEnabled":true,
             "_disableDialogs":true,"_locale":"fr_FR","_storefront":"FRA","_timeRate":12,
             "_storeKitErrors":[{"name":"Purchase","enabled":true,"current":null},{"name":"Load Products","enabled":false}]}}
            """#
        let catalog = try StaticProductCatalog(jsonData: Data(json.utf8))

        #expect(catalog.count == 0)
        #expect(
            catalog.storeKitSettings
                == StoreKitConfigurationSettings(
                    askToBuyEnabled: true,
                    billingIssuesEnabled: true,
                    billingGracePeriodEnabled: true,
                    renewalBillingIssuesEnabled: true,
                    failTransactionsEnabled: true,
                    disableDialogs: true,
                    locale: "fr_FR",
                    storefront: "FRA",
                    timeRate: 12,
                    failingStoreKitAPIs: ["Purchase"]
                )
        )
    }

    @Test(arguments: [2, 6])
    func unsupportedVersionsNameTheSupportedOnes(major: Int) throws {
        let text = String(decoding: try Self.storeKitData("revenuecat-UnitTestsConfiguration.v5"), as: UTF8.self)
            .replacingOccurrences(of: #""major" : 5"#, with: #""major" : \#(major)"#)
        let error = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(text.utf8)) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("\(major).0"))
        #expect(error.message.contains("versions 3, 4 and 5"))
    }

    @Test func overlaysGiveEntitlementsAndDurations() throws {
        let catalog = try StaticProductCatalog(
            jsonData: Self.storeKitData("revenuecat-UnitTestsConfiguration.v5"),
            entitlements: ["lifetime": ["premium"], "com.revenuecat.monthly_4.99.1_week_intro": ["premium", "extra"]],
            nonRenewingDurations: ["com.revenuecat.non_renewable": SubscriptionPeriod(value: 1, unit: .year)]
        )

        #expect(catalog[productId: "lifetime"]?.entitlements == ["premium"])
        #expect(catalog[productId: "com.revenuecat.monthly_4.99.1_week_intro"]?.entitlements == ["premium", "extra"])
        #expect(catalog[productId: "com.revenuecat.consumable"]?.entitlements == ["com.revenuecat.consumable"])
        #expect(
            catalog[productId: "com.revenuecat.non_renewable"]?.duration == SubscriptionPeriod(value: 1, unit: .year)
        )
    }

    @Test func defaultNonRenewingDurationIsConfigurable() throws {
        let data = try Self.storeKitData("revenuecat-UnitTestsConfiguration.v5")

        let weekly = try StaticProductCatalog(
            jsonData: data,
            defaultNonRenewingDuration: SubscriptionPeriod(value: 1, unit: .week)
        )
        #expect(
            weekly[productId: "com.revenuecat.non_renewable"]?.duration == SubscriptionPeriod(value: 1, unit: .week)
        )

        let error = try #require(throws: IAPError.self) {
            try StaticProductCatalog(jsonData: data, defaultNonRenewingDuration: nil)
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("'com.revenuecat.non_renewable'"))
    }

    @Test func overlaysNamingMissingOrWrongProductsAreRejected() throws {
        let data = try Self.storeKitData("revenuecat-UnitTestsConfiguration.v5")

        let unknown = try #require(throws: IAPError.self) {
            try StaticProductCatalog(jsonData: data, entitlements: ["lifetim": ["premium"]])
        }
        #expect(unknown.code == .invalidConfiguration)
        #expect(unknown.message.contains("lifetim"))

        let wrongKind = try #require(throws: IAPError.self) {
            try StaticProductCatalog(
                jsonData: data,
                nonRenewingDurations: ["lifetime": SubscriptionPeriod(value: 1, unit: .month)]
            )
        }
        #expect(wrongKind.code == .invalidConfiguration)
        #expect(wrongKind.message.contains("'lifetime'"))
        #expect(wrongKind.message.contains("nonConsumable"))
    }

    @Test func handWrittenFilesMayLeaveOutArraysButNotProductFields() throws {
        let minimal = #"""
            {"version":{"major":3,"minor":0},"subscriptionGroups":[{"id":"G1","subscriptions":[
              {"productID":"sub","type":"RecurringSubscription","groupNumber":1,"recurringSubscriptionPeriod":"P1W"}]}]}
            """#
        let catalog = try StaticProductCatalog(jsonData: Data(minimal.utf8))
        #expect(catalog[productId: "sub"]?.subscriptionGroupId == "G1")
        #expect(catalog[productId: "sub"]?.displayName == nil)
        #expect(catalog.storeKitSettings == StoreKitConfigurationSettings())

        let badType = #"{"version":{"major":4,"minor":0},"products":[{"productID":"x","type":"Bundle"}]}"#
        let typeError = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(badType.utf8)) }
        #expect(typeError.code == .invalidConfiguration)
        #expect(typeError.message.contains("'x'"))
        #expect(typeError.message.contains("'Bundle'"))

        let missingId =
            #"{"version":{"major":5,"minor":0},"nonRenewingSubscriptions":[{"type":"NonRenewingSubscription"}]}"#
        let idError = try #require(throws: IAPError.self) { try StaticProductCatalog(jsonData: Data(missingId.utf8)) }
        #expect(idError.message.contains("'nonRenewingSubscriptions[0].productID'"), "\(idError.message)")

        let badPeriod = #"""
            {"version":{"major":5,"minor":0},"subscriptionGroups":[{"id":"G","subscriptions":[
              {"productID":"s","type":"RecurringSubscription","recurringSubscriptionPeriod":"monthly"}]}]}
            """#
        let periodError = try #require(throws: IAPError.self) {
            try StaticProductCatalog(jsonData: Data(badPeriod.utf8))
        }
        #expect(periodError.message.contains("'monthly'"))
    }
}

/// A swift-iap catalog that names a `.storekit` file: the pack sizes and entitlements a `.storekit` file cannot say.
@Suite struct StoreKitUnitsTests {
    /// A directory with the v5 fixture as `Products.storekit` and a catalog naming it.
    private static func directory(catalog: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(contentsOf: Fixture.url("revenuecat-UnitTestsConfiguration.v5", fileExtension: "storekit"))
            .write(to: directory.appending(path: "Products.storekit"))
        try Data(catalog.utf8).write(to: directory.appending(path: "catalog.json"))
        return directory
    }

    @Test func aBareStoreKitConsumableCountsOneUnitAndSaysSo() throws {
        let catalog = try StaticProductCatalog(
            jsonData: Data(contentsOf: Fixture.url("revenuecat-UnitTestsConfiguration.v5", fileExtension: "storekit"))
        )
        #expect(catalog[productId: "com.revenuecat.consumable"]?.unitsPerPurchase == 1)
        #expect(catalog.warnings.count == 1)
        #expect(catalog.warnings.first?.contains("'com.revenuecat.consumable'") == true)
        #expect(catalog.warnings.first?.contains("unitsPerPurchase") == true)
    }

    @Test func aCatalogNamingTheStoreKitFileGivesPackSizesAndEntitlements() throws {
        let directory = try Self.directory(
            catalog: """
                {"version": 1, "storekit": "Products.storekit", "products": [
                    {"productId": "com.revenuecat.consumable", "unitsPerPurchase": 100, "entitlements": ["coins"]},
                    {"productId": "lifetime", "type": "nonConsumable", "entitlements": ["premium"]}
                ]}
                """
        )
        defer { try? FileManager.default.removeItem(at: directory) }

        let catalog = try StaticProductCatalog(contentsOf: directory.appending(path: "catalog.json"))

        let coins = try #require(catalog[productId: "com.revenuecat.consumable"])
        #expect(coins.unitsPerPurchase == 100)
        #expect(coins.entitlements == ["coins"])
        #expect(catalog[productId: "lifetime"]?.entitlements == ["premium"])
        // Everything else comes from the .storekit file, settings included; nothing to warn about.
        #expect(catalog.count == 7)
        #expect(catalog[productId: "com.revenuecat.monthly_4.99.1_week_intro"]?.kind == .autoRenewable)
        #expect(catalog.storeKitSettings != nil)
        #expect(catalog.warnings.isEmpty)

        // Saved in the swift-iap format, it stands alone and loads to the same products.
        let saved = try StaticProductCatalog(jsonData: try catalog.jsonRepresentation())
        #expect(saved.products == catalog.products)
    }

    @Test func aConsumableTheCatalogLeavesUnsizedIsWarnedOf() throws {
        let directory = try Self.directory(
            catalog: #"{"version": 1, "storekit": "Products.storekit", "products": []}"#
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = try StaticProductCatalog(contentsOf: directory.appending(path: "catalog.json"))
        #expect(catalog.warnings.count == 1)
        #expect(catalog.warnings.first?.contains("Products.storekit") == true)
    }

    @Test(arguments: [
        (#"{"productId": "nope", "unitsPerPurchase": 5}"#, "'nope', which Products.storekit does not have"),
        (#"{"productId": "lifetime", "type": "consumable"}"#, "'lifetime' is consumable; Products.storekit says"),
        (#"{"productId": "com.revenuecat.consumable", "unitsPerPurchase": 0}"#, "unitsPerPurchase 0"),
    ])
    func aWrongOverlayIsRefusedNamingTheProduct(_ entry: String, _ message: String) throws {
        let directory = try Self.directory(
            catalog: #"{"version": 1, "storekit": "Products.storekit", "products": [\#(entry)]}"#
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(throws: IAPError.self) {
            try StaticProductCatalog(contentsOf: directory.appending(path: "catalog.json"))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func fromBytesAloneTheStoreKitFileCannotBeFoundAndTheErrorSaysHow() throws {
        let error = try #require(throws: IAPError.self) {
            try StaticProductCatalog(jsonData: Data(#"{"version": 1, "storekit": "P.storekit", "products": []}"#.utf8))
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("load it from its file"))
    }
}
