/// The products the demo sells, as an Xcode StoreKit configuration file (format version 3), bundled in the tool
/// and written to the demo's directory so it can be opened in Xcode or passed to `iap ledger --catalog`.
enum DemoProducts {
    /// The bundle id the simulated App Store signs for.
    static let bundleId = "com.example.iapdemo"
    /// The App Apple ID the simulated App Store signs for.
    static let appAppleId: Int64 = 6_400_000_001
    /// Prices in milliunits of USD.
    static let prices: [String: Int64] = ["coins.100": 990, "remove.ads": 2_990, "pro.monthly": 4_990]

    /// The file's name in the demo directory.
    static let fileName = "Products.storekit"

    /// The name of the catalog that names the `.storekit` file.
    static let catalogFileName = "Products.catalog.json"

    /// The catalog: the `.storekit` file's products, with what such a file cannot say — what each product unlocks,
    /// and how many coins a purchase of `coins.100` adds.
    static let catalogFile = """
        {
          "version": 1,
          "storekit": "\(fileName)",
          "products": [
            { "productId": "coins.100", "unitsPerPurchase": 100, "entitlements": [] },
            { "productId": "remove.ads", "entitlements": ["no-ads"] },
            { "productId": "pro.monthly", "entitlements": ["pro", "no-ads"] }
          ]
        }

        """

    /// The `.storekit` file.
    static let storeKitFile = """
        {
          "identifier" : "6E2B4E8A",
          "nonRenewingSubscriptions" : [],
          "products" : [
            {
              "displayPrice" : "0.99",
              "familyShareable" : false,
              "internalID" : "6E2B4E01",
              "localizations" : [
                { "description" : "A pouch of 100 coins", "displayName" : "100 Coins", "locale" : "en_US" }
              ],
              "productID" : "coins.100",
              "referenceName" : "100 coins",
              "type" : "Consumable"
            },
            {
              "displayPrice" : "2.99",
              "familyShareable" : false,
              "internalID" : "6E2B4E02",
              "localizations" : [
                { "description" : "No more ads, for good", "displayName" : "Remove Ads", "locale" : "en_US" }
              ],
              "productID" : "remove.ads",
              "referenceName" : "remove ads",
              "type" : "NonConsumable"
            }
          ],
          "settings" : {
            "_askToBuyEnabled" : true,
            "_billingGracePeriodEnabled" : true,
            "_billingIssuesEnabled" : false,
            "_disableDialogs" : false,
            "_failTransactionsEnabled" : false,
            "_locale" : "en_US",
            "_renewalBillingIssuesEnabled" : false,
            "_storefront" : "USA",
            "_storeKitErrors" : [],
            "_timeRate" : 0
          },
          "subscriptionGroups" : [
            {
              "id" : "21500001",
              "localizations" : [],
              "name" : "Pro",
              "subscriptions" : [
                {
                  "adHocOffers" : [],
                  "codeOffers" : [],
                  "displayPrice" : "4.99",
                  "familyShareable" : false,
                  "groupNumber" : 1,
                  "internalID" : "6E2B4E03",
                  "introductoryOffer" : null,
                  "localizations" : [
                    { "description" : "Everything, renewed monthly", "displayName" : "Pro Monthly", "locale" : "en_US" }
                  ],
                  "productID" : "pro.monthly",
                  "recurringSubscriptionPeriod" : "P1M",
                  "referenceName" : "pro monthly",
                  "subscriptionGroupID" : "21500001",
                  "type" : "RecurringSubscription"
                }
              ]
            }
          ],
          "version" : { "major" : 3, "minor" : 0 }
        }

        """
}
