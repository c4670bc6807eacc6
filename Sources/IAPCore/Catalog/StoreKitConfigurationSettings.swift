/// The test settings of an Xcode `.storekit` file, which a simulated App Store can follow.
///
/// Xcode writes them in the file's `settings` object with a leading underscore (`_askToBuyEnabled`, ...).
/// Every key is optional in the file; a missing one takes the value `SKTestSession` starts with, which is
/// what each property's default says.
public struct StoreKitConfigurationSettings: Codable, Sendable, Hashable {
    /// Whether purchases wait for a parent's approval (Ask to Buy); `_askToBuyEnabled`, default `false`.
    public var askToBuyEnabled: Bool
    /// Whether a failed renewal enters billing retry; `_billingIssuesEnabled`, default `false`.
    public var billingIssuesEnabled: Bool
    /// Whether billing retry starts with a grace period; `_billingGracePeriodEnabled`, default `false`.
    public var billingGracePeriodEnabled: Bool
    /// Whether renewals run into billing issues (format 5); `_renewalBillingIssuesEnabled`, default `false`.
    public var renewalBillingIssuesEnabled: Bool
    /// Whether purchases fail; `_failTransactionsEnabled`, default `false`.
    public var failTransactionsEnabled: Bool
    /// Whether StoreKit skips its dialogs; `_disableDialogs`, default `false`.
    public var disableDialogs: Bool
    /// The locale, such as `en_US`; `_locale`, default `en_US`.
    public var locale: String
    /// The storefront as an ISO 3166-1 alpha-3 code, such as `USA`; `_storefront`, default `USA`.
    public var storefront: String
    /// How fast subscription time runs, as `SKTestSession.TimeRate`'s raw value (0 is real time); `_timeRate`,
    /// default 0.
    public var timeRate: Int
    /// The names of the StoreKit APIs set to fail (`_storeKitErrors` entries with `enabled: true`), such as
    /// `"Purchase"`; empty by default.
    public var failingStoreKitAPIs: [String]

    /// Creates settings; every argument defaults to what `SKTestSession` starts with.
    public init(
        askToBuyEnabled: Bool = false,
        billingIssuesEnabled: Bool = false,
        billingGracePeriodEnabled: Bool = false,
        renewalBillingIssuesEnabled: Bool = false,
        failTransactionsEnabled: Bool = false,
        disableDialogs: Bool = false,
        locale: String = "en_US",
        storefront: String = "USA",
        timeRate: Int = 0,
        failingStoreKitAPIs: [String] = []
    ) {
        self.askToBuyEnabled = askToBuyEnabled
        self.billingIssuesEnabled = billingIssuesEnabled
        self.billingGracePeriodEnabled = billingGracePeriodEnabled
        self.renewalBillingIssuesEnabled = renewalBillingIssuesEnabled
        self.failTransactionsEnabled = failTransactionsEnabled
        self.disableDialogs = disableDialogs
        self.locale = locale
        self.storefront = storefront
        self.timeRate = timeRate
        self.failingStoreKitAPIs = failingStoreKitAPIs
    }
}
