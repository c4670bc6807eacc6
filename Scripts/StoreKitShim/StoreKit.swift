// The StoreKit 2 API that IAPStoreKit uses, declared from Apple's public documentation so that
// Scripts/typecheck-storekit.sh can type-check the adapter on Linux, where StoreKit does not exist.
//
// Each declaration has the shape Apple documents: its name, labels, types, `async`, `throws`, optionality, actor
// isolation and platform availability; the doc comment names the documentation page it follows. Stored `let`
// properties are declared as read-only computed properties (the same to a caller). Nothing here runs: every body
// is `fatalError`. Declarations StoreKit back-deploys (`@backDeployed(before:)`) carry the availability of their
// first release, as a caller sees it; the comment says so. This proves that the adapter is well-typed against the
// documented API, not that it behaves: behaviour is tested in IAPApp with the simulated App Store.
//
// Only what the adapter names is here. Adding a call to the adapter means adding its declaration, from its page.

public import Foundation

#if canImport(UIKit)
    public import UIKit
#endif
#if canImport(AppKit)
    public import AppKit
#endif

// MARK: - VerificationResult

/// A value StoreKit verified, or could not verify.
///
/// Apple: https://developer.apple.com/documentation/storekit/verificationresult
/// (`@frozen enum VerificationResult<SignedType>`, iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
@frozen
public enum VerificationResult<SignedType> {
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/unverified(_:_:)
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verified(_:)
    case verified(SignedType)

    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror
    public enum VerificationError: Error, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/revokedcertificate
        case revokedCertificate
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/invalidcertificatechain
        case invalidCertificateChain
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/invaliddevicehash
        case invalidDeviceVerification
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/invalidencoding
        case invalidEncoding
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/invalidsignature
        case invalidSignature
        /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/verificationerror/missingrequiredproperties
        case missingRequiredProperties
    }

    /// The signed value, whether or not it verified.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/unsafepayloadvalue
    /// (`var unsafePayloadValue: SignedType { get }`)
    public var unsafePayloadValue: SignedType { fatalError("type-check shim") }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult: Sendable where SignedType: Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult where SignedType == Transaction {
    /// The transaction as the App Store signed it, a compact JWS.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/jwsrepresentation-21vgo
    /// (`var jwsRepresentation: String { get }`)
    public var jwsRepresentation: String { fatalError("type-check shim") }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult where SignedType == Product.SubscriptionInfo.RenewalInfo {
    /// The renewal information as the App Store signed it, a compact JWS.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/jwsrepresentation-178oj
    /// (`var jwsRepresentation: String { get }`)
    public var jwsRepresentation: String { fatalError("type-check shim") }
}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension VerificationResult where SignedType == AppTransaction {
    /// The app transaction as the App Store signed it, a compact JWS.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/verificationresult/jwsrepresentation-6ma59
    /// (`var jwsRepresentation: String { get }`, iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1)
    public var jwsRepresentation: String { fatalError("type-check shim") }
}

// MARK: - Product

/// Information about a product configured in App Store Connect.
///
/// Apple: https://developer.apple.com/documentation/storekit/product
/// (`struct Product`, Equatable, Hashable, Identifiable, Sendable; iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Product: Equatable, Hashable, Identifiable, Sendable {
    /// Apple: https://developer.apple.com/documentation/storekit/product/id-swift.property (`let id: String`)
    public var id: String { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/displayname (`let displayName: String`)
    public var displayName: String { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/displayprice (`let displayPrice: String`)
    public var displayPrice: String { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/type-swift.property
    /// (`let type: Product.ProductType`)
    public var type: Product.ProductType { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/subscription
    /// (`let subscription: Product.SubscriptionInfo?`)
    public var subscription: Product.SubscriptionInfo? { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/price (`let price: Decimal`)
    public var price: Decimal { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/product/priceformatstyle
    /// (`let priceFormatStyle: Decimal.FormatStyle.Currency`)
    public var priceFormatStyle: Decimal.FormatStyle.Currency { fatalError("type-check shim") }

    public static func == (lhs: Product, rhs: Product) -> Bool { fatalError("type-check shim") }
    public func hash(into hasher: inout Hasher) { fatalError("type-check shim") }

    /// Requests product data from the App Store.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/products(for:)
    /// (`static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product] where
    /// Identifiers : Collection, Identifiers.Element == String`)
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers: Collection, Identifiers.Element == String {
        fatalError("type-check shim")
    }

    /// Initiates a purchase and displays the confirmation sheet; unavailable in visionOS.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/purchase(options:)
    /// (`@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`;
    /// iOS 15, macOS 12, tvOS 15, watchOS 8; visionOS: unavailable)
    @available(visionOS, unavailable)
    @MainActor
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        fatalError("type-check shim")
    }

    #if canImport(UIKit)
        /// Initiates a purchase and displays the confirmation sheet in a scene.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchase(confirmin:options:)-6dj6y
        /// (`@MainActor func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = [])
        /// async throws -> Product.PurchaseResult`; iOS 17, Mac Catalyst 17, tvOS 17, visionOS 1)
        @available(iOS 17.0, tvOS 17.0, visionOS 1.0, *)
        @available(macOS, unavailable)
        @available(watchOS, unavailable)
        @MainActor
        public func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws
            -> Product.PurchaseResult
        {
            fatalError("type-check shim")
        }
    #endif

    /// The types of in-app purchases.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/producttype (`struct ProductType`)
    public struct ProductType: RawRepresentable, Equatable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Apple: https://developer.apple.com/documentation/storekit/product/producttype/consumable
        public static let consumable = ProductType(rawValue: "Consumable")
        /// Apple: https://developer.apple.com/documentation/storekit/product/producttype/nonconsumable
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        /// Apple: https://developer.apple.com/documentation/storekit/product/producttype/nonrenewable
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        /// Apple: https://developer.apple.com/documentation/storekit/product/producttype/autorenewable
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    }

    /// An option of a purchase.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption
    /// (`struct PurchaseOption`, Equatable, Hashable, Sendable)
    public struct PurchaseOption: Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/appaccounttoken(_:)
        /// (`static func appAccountToken(_ token: UUID) -> Product.PurchaseOption`)
        public static func appAccountToken(_ token: UUID) -> Product.PurchaseOption { fatalError("type-check shim") }

        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/quantity(_:)
        /// (`static func quantity(_ quantity: Int) -> Product.PurchaseOption`)
        public static func quantity(_ quantity: Int) -> Product.PurchaseOption { fatalError("type-check shim") }

        /// A promotional offer with the version 1 signature (deprecated from iOS 26, macOS 26, tvOS 26, watchOS 26,
        /// visionOS 26, which prefer the compact JWS).
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/promotionaloffer(offerid:keyid:nonce:signature:timestamp:)
        /// (`static func promotionalOffer(offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int)
        /// -> Product.PurchaseOption`; iOS 15 ... 26)
        @available(iOS, introduced: 15.0, deprecated: 26.0)
        @available(macOS, introduced: 12.0, deprecated: 26.0)
        @available(tvOS, introduced: 15.0, deprecated: 26.0)
        @available(watchOS, introduced: 8.0, deprecated: 26.0)
        @available(visionOS, introduced: 1.0, deprecated: 26.0)
        public static func promotionalOffer(
            offerID: String,
            keyID: String,
            nonce: UUID,
            signature: Data,
            timestamp: Int
        ) -> Product.PurchaseOption {
            fatalError("type-check shim")
        }

        /// A promotional offer with a compact JWS signature; note it returns an array of options.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/promotionaloffer(_:compactjws:)
        /// (`@backDeployed(before: iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0) static func
        /// promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption]`; available from iOS 15,
        /// macOS 12, tvOS 15, watchOS 8, visionOS 1 in apps built with the iOS 26 SDK)
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption] {
            fatalError("type-check shim")
        }

        /// The app server's signed introductory offer eligibility.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/introductoryoffereligibility(compactjws:)
        /// (`@backDeployed(before: iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4) static func
        /// introductoryOfferEligibility(compactJWS: String) -> Product.PurchaseOption`; available from iOS 15,
        /// macOS 12, tvOS 15, watchOS 8, visionOS 1 in apps built with the iOS 18.4 SDK)
        public static func introductoryOfferEligibility(compactJWS: String) -> Product.PurchaseOption {
            fatalError("type-check shim")
        }

        /// A win-back offer.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseoption/winbackoffer(_:)
        /// (`static func winBackOffer(_ offer: Product.SubscriptionOffer) -> Product.PurchaseOption`; iOS 18,
        /// macOS 15, tvOS 18, watchOS 11, visionOS 2)
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> Product.PurchaseOption {
            fatalError("type-check shim")
        }
    }

    /// The result of a purchase.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseresult (`enum PurchaseResult`)
    public enum PurchaseResult: Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseresult/success(_:)
        case success(VerificationResult<Transaction>)
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseresult/usercancelled
        case userCancelled
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseresult/pending
        case pending
    }

    /// The errors of a purchase.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror (`enum PurchaseError`)
    public enum PurchaseError: Error, Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/invalidquantity
        case invalidQuantity
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/productunavailable
        case productUnavailable
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/purchasenotallowed
        case purchaseNotAllowed
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/ineligibleforoffer
        case ineligibleForOffer
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/invalidofferidentifier
        case invalidOfferIdentifier
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/invalidofferprice
        case invalidOfferPrice
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/invalidoffersignature
        case invalidOfferSignature
        /// Apple: https://developer.apple.com/documentation/storekit/product/purchaseerror/missingofferparameters
        case missingOfferParameters
    }

    /// A subscription offer.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer (`struct SubscriptionOffer`)
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/id (`let id: String?`)
        public var id: String? { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/price
        /// (`let price: Decimal`)
        public var price: Decimal { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/displayprice
        /// (`let displayPrice: String`)
        public var displayPrice: String { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/period
        /// (`let period: Product.SubscriptionPeriod`)
        public var period: Product.SubscriptionPeriod { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/periodcount
        /// (`let periodCount: Int`)
        public var periodCount: Int { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode-swift.property
        /// (`let paymentMode: Product.SubscriptionOffer.PaymentMode`)
        public var paymentMode: Product.SubscriptionOffer.PaymentMode { fatalError("type-check shim") }

        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode-swift.struct
        /// (`struct PaymentMode`, Equatable, Hashable, Sendable)
        public struct PaymentMode: Equatable, Hashable, Sendable {
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode-swift.struct/freetrial
            /// (`static let freeTrial: Product.SubscriptionOffer.PaymentMode`)
            public static var freeTrial: Product.SubscriptionOffer.PaymentMode { fatalError("type-check shim") }
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode-swift.struct/payasyougo
            /// (`static let payAsYouGo: Product.SubscriptionOffer.PaymentMode`)
            public static var payAsYouGo: Product.SubscriptionOffer.PaymentMode { fatalError("type-check shim") }
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode-swift.struct/payupfront
            /// (`static let payUpFront: Product.SubscriptionOffer.PaymentMode`)
            public static var payUpFront: Product.SubscriptionOffer.PaymentMode { fatalError("type-check shim") }
        }
    }

    /// The length of a subscription's period or of an offer's.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod
    /// (`struct SubscriptionPeriod`, Equatable, Hashable, Sendable)
    public struct SubscriptionPeriod: Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/value (`let value: Int`)
        public var value: Int { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.property
        /// (`let unit: Product.SubscriptionPeriod.Unit`)
        public var unit: Product.SubscriptionPeriod.Unit { fatalError("type-check shim") }

        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.enum
        /// (`enum Unit`, Equatable, Hashable, Sendable)
        public enum Unit: Equatable, Hashable, Sendable {
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.enum/day
            case day
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.enum/week
            case week
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.enum/month
            case month
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit-swift.enum/year
            case year
        }
    }

    /// Information about an auto-renewable subscription.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo (`struct SubscriptionInfo`)
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/subscriptiongroupid
        /// (`let subscriptionGroupID: String`)
        public var subscriptionGroupID: String { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/subscriptionperiod
        /// (`let subscriptionPeriod: Product.SubscriptionPeriod`)
        public var subscriptionPeriod: Product.SubscriptionPeriod { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/introductoryoffer
        /// (`let introductoryOffer: Product.SubscriptionOffer?`)
        public var introductoryOffer: Product.SubscriptionOffer? { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/promotionaloffers
        /// (`let promotionalOffers: [Product.SubscriptionOffer]`)
        public var promotionalOffers: [Product.SubscriptionOffer] { fatalError("type-check shim") }
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/iseligibleforintrooffer
        /// (`var isEligibleForIntroOffer: Bool { get async }`)
        public var isEligibleForIntroOffer: Bool { get async { fatalError("type-check shim") } }

        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/winbackoffers
        /// (`let winBackOffers: [Product.SubscriptionOffer]`; iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2)
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public var winBackOffers: [Product.SubscriptionOffer] { fatalError("type-check shim") }

        /// The statuses of a subscription group.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status(for:)
        /// (`static func status(for groupID: String) async throws -> [Product.SubscriptionInfo.Status]`)
        public static func status(for groupID: String) async throws -> [Product.SubscriptionInfo.Status] {
            fatalError("type-check shim")
        }

        /// The renewal status of an auto-renewable subscription.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct
        /// (`struct Status`)
        public struct Status: Equatable, Hashable, Sendable {
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct/state
            /// (`let state: Product.SubscriptionInfo.RenewalState`)
            public var state: Product.SubscriptionInfo.RenewalState { fatalError("type-check shim") }
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct/transaction
            /// (`let transaction: VerificationResult<Transaction>`)
            public var transaction: VerificationResult<Transaction> { fatalError("type-check shim") }
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct/renewalinfo
            /// (`let renewalInfo: VerificationResult<Product.SubscriptionInfo.RenewalInfo>`)
            public var renewalInfo: VerificationResult<Product.SubscriptionInfo.RenewalInfo> {
                fatalError("type-check shim")
            }

            public static func == (lhs: Status, rhs: Status) -> Bool { fatalError("type-check shim") }
            public func hash(into hasher: inout Hasher) { fatalError("type-check shim") }
        }

        /// The renewal states of auto-renewable subscriptions.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate
        /// (`struct RenewalState`, `init(rawValue: Int)`)
        public struct RenewalState: RawRepresentable, Equatable, Hashable, Sendable {
            public var rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate/subscribed
            public static let subscribed = RenewalState(rawValue: 1)
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate/expired
            public static let expired = RenewalState(rawValue: 2)
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate/inbillingretryperiod
            public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate/ingraceperiod
            public static let inGracePeriod = RenewalState(rawValue: 4)
            /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate/revoked
            public static let revoked = RenewalState(rawValue: 5)
        }

        /// Signed renewal information; the adapter passes on its JWS only.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalinfo
        /// (`struct RenewalInfo`)
        public struct RenewalInfo: Equatable, Hashable, Sendable {}

        public static func == (lhs: SubscriptionInfo, rhs: SubscriptionInfo) -> Bool { fatalError("type-check shim") }
        public func hash(into hasher: inout Hasher) { fatalError("type-check shim") }
    }
}

// MARK: - Transaction

/// A purchase of a product.
///
/// Apple: https://developer.apple.com/documentation/storekit/transaction
/// (`struct Transaction`; iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Transaction: Equatable, Hashable, Identifiable, Sendable {
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/id (`let id: UInt64`)
    public var id: UInt64 { fatalError("type-check shim") }

    public static func == (lhs: Transaction, rhs: Transaction) -> Bool { fatalError("type-check shim") }
    public func hash(into hasher: inout Hasher) { fatalError("type-check shim") }

    /// Tells the App Store the app delivered the purchase.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/finish() (`func finish() async`)
    public func finish() async { fatalError("type-check shim") }

    /// Apple: https://developer.apple.com/documentation/storekit/transaction/updates
    /// (`static var updates: Transaction.Transactions { get }`)
    public static var updates: Transaction.Transactions { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/all
    /// (`static var all: Transaction.Transactions { get }`)
    public static var all: Transaction.Transactions { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/currententitlements
    /// (`static var currentEntitlements: Transaction.Transactions { get }`)
    public static var currentEntitlements: Transaction.Transactions { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/unfinished
    /// (`static var unfinished: Transaction.Transactions { get }`)
    public static var unfinished: Transaction.Transactions { fatalError("type-check shim") }

    /// The customer's most recent transaction of a product.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/latest(for:)
    /// (`static func latest(for productID: String) async -> VerificationResult<Transaction>?`)
    public static func latest(for productID: String) async -> VerificationResult<Transaction>? {
        fatalError("type-check shim")
    }

    #if canImport(UIKit)
        /// Presents the refund request sheet in a window scene.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/beginrefundrequest(for:in:)-65tph
        /// (`@MainActor static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws
        /// -> Transaction.RefundRequestStatus`; iOS, iPadOS, Mac Catalyst, visionOS)
        @available(iOS 15.0, visionOS 1.0, *)
        @available(macOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @MainActor
        public static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws
            -> Transaction.RefundRequestStatus
        {
            fatalError("type-check shim")
        }
    #endif

    #if canImport(AppKit)
        /// Presents the refund request sheet in a view controller.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/beginrefundrequest(for:in:)-9mscy
        /// (`static func beginRefundRequest(for transactionID: UInt64, in controller: NSViewController) async throws
        /// -> Transaction.RefundRequestStatus`; macOS 12)
        @available(macOS 12.0, *)
        @available(iOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @available(visionOS, unavailable)
        public static func beginRefundRequest(for transactionID: UInt64, in controller: NSViewController) async throws
            -> Transaction.RefundRequestStatus
        {
            fatalError("type-check shim")
        }
    #endif

    /// A sequence of verified and unverified transactions.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/transactions
    /// (`struct Transactions`, AsyncSequence of `VerificationResult<Transaction>`)
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        public struct AsyncIterator: AsyncIteratorProtocol {
            public mutating func next() async -> VerificationResult<Transaction>? { fatalError("type-check shim") }
        }

        public func makeAsyncIterator() -> AsyncIterator { fatalError("type-check shim") }
    }

    /// The status of a refund request: whether it was sent, not whether it refunds.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequeststatus
    /// (`enum RefundRequestStatus`; iOS 15, macOS 12, tvOS 17, watchOS 10, visionOS 1)
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestStatus: Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequeststatus/usercancelled
        case userCancelled
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequeststatus/success
        case success
    }

    /// The errors of a refund request.
    ///
    /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequesterror
    /// (`enum RefundRequestError`; iOS 15, macOS 12, tvOS 17, watchOS 10, visionOS 1)
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestError: Error, Equatable, Hashable, Sendable {
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequesterror/duplicaterequest
        case duplicateRequest
        /// Apple: https://developer.apple.com/documentation/storekit/transaction/refundrequesterror/failed
        case failed
    }
}

// MARK: - AppTransaction

/// The App Store's signed record of the app's download.
///
/// Apple: https://developer.apple.com/documentation/storekit/apptransaction
/// (`struct AppTransaction`; iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1)
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct AppTransaction: Equatable, Hashable, Sendable {
    /// Apple: https://developer.apple.com/documentation/storekit/apptransaction/shared
    /// (`static var shared: VerificationResult<AppTransaction> { get async throws }`)
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { fatalError("type-check shim") }
    }

    /// Apple: https://developer.apple.com/documentation/storekit/apptransaction/refresh()
    /// (`static func refresh() async throws -> VerificationResult<AppTransaction>`)
    public static func refresh() async throws -> VerificationResult<AppTransaction> { fatalError("type-check shim") }
}

// MARK: - PurchaseIntent

/// A purchase the customer started outside the app: a promoted in-app purchase, or a win-back offer.
///
/// Apple: https://developer.apple.com/documentation/storekit/purchaseintent (`struct PurchaseIntent`; iOS 16.4,
/// iPadOS 16.4, Mac Catalyst 16.4, macOS 14.4; not on tvOS, watchOS or visionOS)
@available(iOS 16.4, macOS 14.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
public struct PurchaseIntent: Sendable {
    /// Apple: https://developer.apple.com/documentation/storekit/purchaseintent/intents
    /// (`static var intents: PurchaseIntent.PurchaseIntents { get }`)
    public static var intents: PurchaseIntent.PurchaseIntents { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/purchaseintent/product (`let product: Product`)
    public var product: Product { fatalError("type-check shim") }
    /// Apple: https://developer.apple.com/documentation/storekit/purchaseintent/offer
    /// (`let offer: Product.SubscriptionOffer?`; iOS 18, macOS 15)
    @available(iOS 18.0, macOS 15.0, *)
    public var offer: Product.SubscriptionOffer? { fatalError("type-check shim") }

    /// Apple: https://developer.apple.com/documentation/storekit/purchaseintent/purchaseintents
    /// (`struct PurchaseIntents`, AsyncSequence of PurchaseIntent)
    public struct PurchaseIntents: AsyncSequence {
        public typealias Element = PurchaseIntent

        public struct AsyncIterator: AsyncIteratorProtocol {
            public mutating func next() async -> PurchaseIntent? { fatalError("type-check shim") }
        }

        public func makeAsyncIterator() -> AsyncIterator { fatalError("type-check shim") }
    }
}

// MARK: - AppStore

/// The App Store's sheets and sync.
///
/// Apple: https://developer.apple.com/documentation/storekit/appstore (`enum AppStore`)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum AppStore {
    /// Apple: https://developer.apple.com/documentation/storekit/appstore/sync() (`static func sync() async throws`)
    public static func sync() async throws { fatalError("type-check shim") }

    /// Apple: https://developer.apple.com/documentation/storekit/appstore/canmakepayments
    /// (`static var canMakePayments: Bool { get }`)
    public static var canMakePayments: Bool { fatalError("type-check shim") }

    #if canImport(UIKit)
        /// Presents the App Store's manage-subscriptions sheet.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:)
        /// (`@MainActor static func showManageSubscriptions(in scene: UIWindowScene) async throws`; iOS 15,
        /// Mac Catalyst 15, visionOS 1)
        @available(iOS 15.0, visionOS 1.0, *)
        @available(macOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @MainActor
        public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
            fatalError("type-check shim")
        }

        /// Presents the manage-subscriptions sheet for one subscription group.
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:subscriptiongroupid:)
        /// (`@MainActor static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async
        /// throws`; iOS 17, Mac Catalyst 17, visionOS 1)
        @available(iOS 17.0, visionOS 1.0, *)
        @available(macOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @MainActor
        public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws {
            fatalError("type-check shim")
        }

        /// Presents the offer code redemption sheet (deprecated from iOS 27 for
        /// `presentOfferCodeRedeemSheet(from:options:)`).
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(in:)
        /// (`@MainActor static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws`; iOS 16 ... 27,
        /// Mac Catalyst 16, visionOS 1)
        @available(iOS, introduced: 16.0, deprecated: 27.0)
        @available(visionOS, introduced: 1.0, deprecated: 27.0)
        @available(macOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @MainActor
        public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
            fatalError("type-check shim")
        }
    #endif

    #if canImport(AppKit)
        /// Presents the offer code redemption sheet from a view controller (deprecated from macOS 27).
        ///
        /// Apple: https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(from:)
        /// (`@MainActor static func presentOfferCodeRedeemSheet(from controller: NSViewController) async throws`;
        /// macOS 15 ... 27)
        @available(macOS, introduced: 15.0, deprecated: 27.0)
        @available(iOS, unavailable)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        @available(visionOS, unavailable)
        @MainActor
        public static func presentOfferCodeRedeemSheet(from controller: NSViewController) async throws {
            fatalError("type-check shim")
        }
    #endif
}

// MARK: - StoreKitError

/// StoreKit's errors.
///
/// Apple: https://developer.apple.com/documentation/storekit/storekiterror (`enum StoreKitError`)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum StoreKitError: Error {
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/unknown
    case unknown
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/usercancelled
    case userCancelled
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/networkerror(_:)
    /// (`case networkError(URLError)`)
    case networkError(URLError)
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/systemerror(_:)
    /// (`case systemError(any Error)`)
    case systemError(any Error)
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/notavailableinstorefront
    case notAvailableInStorefront
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/notentitled
    case notEntitled
    /// Apple: https://developer.apple.com/documentation/storekit/storekiterror/unsupported
    /// (iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4)
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
    case unsupported
}
