#if canImport(StoreKit)
    import Foundation
    public import IAPApp
    import IAPCore
    import StoreKit
    #if os(iOS) || os(visionOS)
        public import UIKit
    #elseif os(macOS)
        public import AppKit
    #endif

    /// The ``StoreClient`` of a real device: a thin adapter over StoreKit 2, from iOS 16, macOS 13, tvOS 16,
    /// watchOS 9 and visionOS 1.
    ///
    /// It passes every transaction through as StoreKit's `jwsRepresentation`, verified by StoreKit or not: the
    /// server verifies, and ``PurchaseCoordinator`` finishes a transaction only after the server confirmed it. It
    /// decides nothing else; every rule lives in `IAPApp` and `IAPCore`, where it is tested. CI type-checks this file
    /// on Linux against the StoreKit API as Apple documents it (`Scripts/typecheck-storekit.sh`), which proves that
    /// it is well-typed, with its `#available` checks, on every platform, not that it behaves.
    ///
    /// | StoreClient | StoreKit 2 |
    /// |---|---|
    /// | `products(for:)` | `Product.products(for:)` |
    /// | `purchase(productId:options:)` | `product.purchase(options:)`; `purchase(confirmIn:options:)` on visionOS |
    /// | `transactionUpdates()` | `Transaction.updates` |
    /// | `unfinishedTransactions()` | `Transaction.unfinished` |
    /// | `allTransactions()` | `Transaction.all` |
    /// | `currentEntitlements()` | `Transaction.currentEntitlements` |
    /// | `latestTransaction(for:)` | `Transaction.latest(for:)` |
    /// | `subscriptionStatuses(groupId:)` | `Product.SubscriptionInfo.status(for:)` |
    /// | `appTransaction(refresh:)` | `AppTransaction.shared`, `AppTransaction.refresh()` |
    /// | `finish(transactionId:)` | `transaction.finish()` |
    /// | `sync()` | `AppStore.sync()` |
    /// | `requestRefund(transactionId:)` | `Transaction.beginRefundRequest(for:in:)` |
    /// | `showManageSubscriptions(groupId:)` | `AppStore.showManageSubscriptions(in:)`, `(in:subscriptionGroupID:)` |
    /// | `presentOfferCodeRedemption()` | `AppStore.presentOfferCodeRedeemSheet(in:)`, `(from:)` on macOS 15 |
    ///
    /// Purchase options: `.appAccountToken`, `.quantity`, `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`,
    /// `.promotionalOffer(_:compactJWS:)` (built with Xcode 26 or later), `.introductoryOfferEligibility(compactJWS:)`
    /// and `.winBackOffer(_:)` (iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2; `unsupportedOperation` before).
    /// The sheets need the window scene (a view controller on macOS) to show in; tvOS and watchOS have none of them,
    /// and macOS no manage-subscriptions sheet: those calls throw `unsupportedOperation`.
    public actor StoreKitStoreClient: StoreClient {
        #if os(iOS) || os(visionOS)
            /// Where sheets (refund, manage subscriptions, offer codes) and, on visionOS, purchase confirmations are
            /// shown.
            public typealias PresentationAnchor = UIWindowScene
        #elseif os(macOS)
            /// Where sheets (refund, offer codes) are shown.
            public typealias PresentationAnchor = NSViewController
        #else
            /// Sheets are not shown on this platform.
            public typealias PresentationAnchor = Never
        #endif

        /// The former name of ``PresentationAnchor``.
        @available(*, deprecated, renamed: "PresentationAnchor")
        public typealias RefundSheetAnchor = PresentationAnchor

        private let presentationAnchor: (@MainActor @Sendable () -> PresentationAnchor?)?
        private var loadedProducts: [String: Product] = [:]
        /// Transactions handed out and not finished yet, to finish them by id.
        private var handedOut: [UInt64: Transaction] = [:]

        /// Creates the client.
        ///
        /// - Parameter presentationAnchor: Returns the window scene (view controller on macOS) the App Store's sheets
        ///   are shown in; without it the sheets fail with `invalidConfiguration`. On visionOS, which has no
        ///   scene-less purchase, purchases are confirmed in this scene too (`purchase(confirmIn:options:)`), and
        ///   fail without it.
        public init(presentationAnchor: (@MainActor @Sendable () -> PresentationAnchor?)? = nil) {
            self.presentationAnchor = presentationAnchor
        }

        /// Creates the client with the anchor of its sheets, under its former name.
        ///
        /// - Parameter refundSheetAnchor: Returns where the sheets are shown.
        @available(*, deprecated, renamed: "init(presentationAnchor:)")
        public init(refundSheetAnchor: (@MainActor @Sendable () -> PresentationAnchor?)?) {
            self.presentationAnchor = refundSheetAnchor
        }

        // MARK: - Products and purchases

        /// Loads products with `Product.products(for:)`.
        ///
        /// - Parameter productIds: The ids.
        /// - Returns: The products StoreKit returned.
        /// - Throws: ``IAPError`` mapped from StoreKit's error.
        public func products(for productIds: Set<String>) async throws -> [StoreProduct] {
            let loaded: [Product]
            do {
                loaded = try await Product.products(for: productIds)
            } catch {
                throw Self.map(error)
            }
            var products: [StoreProduct] = []
            for product in loaded {
                loadedProducts[product.id] = product
                var item = StoreProduct(
                    id: product.id,
                    displayName: product.displayName,
                    displayPrice: product.displayPrice,
                    type: Self.productType(product.type),
                    subscriptionGroupId: product.subscription?.subscriptionGroupID,
                    price: product.price,
                    currencyCode: product.priceFormatStyle.currencyCode
                )
                if let subscription = product.subscription {
                    item.subscriptionPeriod = Self.period(subscription.subscriptionPeriod)
                    item.introductoryOffer = subscription.introductoryOffer.map { Self.offer($0, kind: .introductory) }
                    item.promotionalOffers = subscription.promotionalOffers.map { Self.offer($0, kind: .promotional) }
                    if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                        item.winBackOffers = subscription.winBackOffers.map { Self.offer($0, kind: .winBack) }
                    }
                    item.isEligibleForIntroOffer = await subscription.isEligibleForIntroOffer
                }
                products.append(item)
            }
            return products
        }

        /// A StoreKit period as the package's.
        static func period(_ period: Product.SubscriptionPeriod) -> SubscriptionPeriod {
            let unit: SubscriptionPeriod.Unit =
                switch period.unit {
                case .day: .day
                case .week: .week
                case .month: .month
                case .year: .year
                @unknown default: .month
                }
            return SubscriptionPeriod(value: period.value, unit: unit)
        }

        /// A StoreKit subscription offer as the package's.
        static func offer(_ offer: Product.SubscriptionOffer, kind: StoreSubscriptionOffer.Kind)
            -> StoreSubscriptionOffer
        {
            let mode: StoreSubscriptionOffer.PaymentMode =
                offer.paymentMode == .freeTrial
                ? .freeTrial : offer.paymentMode == .payUpFront ? .payUpFront : .payAsYouGo
            return StoreSubscriptionOffer(
                id: offer.id,
                kind: kind,
                paymentMode: mode,
                price: offer.price,
                displayPrice: offer.displayPrice,
                period: period(offer.period),
                periodCount: offer.periodCount
            )
        }

        /// Buys with `product.purchase(options:)` (on visionOS `product.purchase(confirmIn:options:)` in the
        /// anchor's scene), passing every option.
        ///
        /// - Parameters:
        ///   - productId: The product.
        ///   - options: The appAccountToken, quantity, offer and introductory offer eligibility.
        /// - Returns: The transaction's `jwsRepresentation`, pending or cancelled.
        /// - Throws: ``IAPError`` mapped from StoreKit's error; `unsupportedOperation` for an option this OS or SDK
        ///   does not have; `offerInvalid` for a win-back offer the product does not list.
        public func purchase(productId: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
            var product = loadedProducts[productId]
            if product == nil {
                _ = try await self.products(for: [productId])
                product = loadedProducts[productId]
            }
            guard let product else {
                throw IAPError(.unknownProduct, "StoreKit returned no product '\(productId)'")
            }
            let purchaseOptions = try Self.purchaseOptions(options, for: product)
            let result: Product.PurchaseResult
            do {
                #if os(visionOS)
                    // visionOS has no scene-less purchase: the confirmation sheet needs the scene to show in.
                    result = try await Self.purchase(product, options: purchaseOptions, anchor: presentationAnchor)
                #else
                    result = try await product.purchase(options: purchaseOptions)
                #endif
            } catch {
                throw Self.map(error)
            }
            switch result {
            case .success(let verification):
                remember(verification)
                return .success(signedTransaction: verification.jwsRepresentation)
            case .pending:
                return .pending
            case .userCancelled:
                return .userCancelled
            @unknown default:
                throw IAPError(.internalError, "StoreKit answered a purchase in a way this version does not know")
            }
        }

        /// StoreKit's purchase options for the package's.
        private static func purchaseOptions(_ options: StorePurchaseOptions, for product: Product) throws
            -> Set<Product.PurchaseOption>
        {
            var purchaseOptions: Set<Product.PurchaseOption> = [
                .appAccountToken(options.appAccountToken), .quantity(options.quantity),
            ]
            switch options.offer {
            case .promotional(let signature)?:
                guard let data = signature.signatureData, let timestamp = Int(exactly: signature.timestamp) else {
                    throw IAPError(.invalidArgument, "the promotional offer's signature or timestamp is not usable")
                }
                purchaseOptions.insert(
                    .promotionalOffer(
                        offerID: signature.offerId,
                        keyID: signature.keyId,
                        nonce: signature.nonce,
                        signature: data,
                        timestamp: timestamp
                    )
                )
            case .promotionalJWS(let offerId, let compactJWS)?:
                #if compiler(>=6.2)
                    // Xcode 26's StoreKit, back-deployed to iOS 15.
                    purchaseOptions.formUnion(Product.PurchaseOption.promotionalOffer(offerId, compactJWS: compactJWS))
                #else
                    _ = (offerId, compactJWS)
                    throw IAPError(
                        .unsupportedOperation,
                        "a compact JWS promotional offer needs an app built with Xcode 26 or later"
                    )
                #endif
            case .winBack(let offerId)?:
                if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                    guard let offer = product.subscription?.winBackOffers.first(where: { $0.id == offerId }) else {
                        throw IAPError(.offerInvalid, "\(product.id) has no win-back offer '\(offerId)'")
                    }
                    purchaseOptions.insert(.winBackOffer(offer))
                } else {
                    throw IAPError(
                        .unsupportedOperation,
                        "win-back offers need iOS 18, macOS 15, tvOS 18, watchOS 11 or visionOS 2"
                    )
                }
            case nil:
                break
            }
            if let compactJWS = options.introductoryOfferEligibility {
                // Back-deployed to iOS 15 by the iOS 18.4 SDK (Xcode 16.3, the package's oldest toolchain).
                purchaseOptions.insert(.introductoryOfferEligibility(compactJWS: compactJWS))
            }
            return purchaseOptions
        }

        // MARK: - Transactions

        /// `Transaction.updates`, as JWS.
        ///
        /// - Returns: The signed transactions StoreKit emits.
        /// `AppStore.canMakePayments`.
        public func canMakePayments() async -> Bool {
            AppStore.canMakePayments
        }

        /// `PurchaseIntent.intents` (iOS 16.4, macOS 14.4; none elsewhere), each intent's product kept for the
        /// purchase that completes it, and its offer (a win-back offer, iOS 18, macOS 15) named.
        public nonisolated func purchaseIntents() -> AsyncStream<AppStorePurchaseIntent> {
            #if os(iOS) || os(macOS)
                if #available(iOS 16.4, macOS 14.4, tvOS 16.4, watchOS 9.4, visionOS 1.1, *) {
                    let (stream, continuation) = AsyncStream.makeStream(of: AppStorePurchaseIntent.self)
                    let task = Task {
                        for await intent in PurchaseIntent.intents {
                            await self.keep(intent.product)
                            var offerId: String?
                            if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                                offerId = intent.offer?.id
                            }
                            continuation.yield(AppStorePurchaseIntent(productId: intent.product.id, offerId: offerId))
                        }
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                    return stream
                }
            #endif
            return AsyncStream { $0.finish() }
        }

        /// Keeps a product StoreKit handed over, for the purchase of it.
        private func keep(_ product: Product) {
            loadedProducts[product.id] = product
        }

        public nonisolated func transactionUpdates() -> AsyncStream<String> {
            let (stream, continuation) = AsyncStream.makeStream(of: String.self)
            let task = Task {
                for await verification in Transaction.updates {
                    await self.remember(verification)
                    continuation.yield(verification.jwsRepresentation)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
            return stream
        }

        /// `Transaction.unfinished`, as JWS.
        ///
        /// - Returns: The signed transactions.
        public func unfinishedTransactions() async throws -> [String] {
            var signed: [String] = []
            for await verification in Transaction.unfinished {
                remember(verification)
                signed.append(verification.jwsRepresentation)
            }
            return signed
        }

        /// `Transaction.all`, as JWS.
        ///
        /// - Returns: The signed transactions.
        public func allTransactions() async throws -> [String] {
            var signed: [String] = []
            for await verification in Transaction.all {
                signed.append(verification.jwsRepresentation)
            }
            return signed
        }

        /// `Transaction.currentEntitlements`, as JWS.
        ///
        /// - Returns: The signed transactions.
        public func currentEntitlements() async throws -> [String] {
            var signed: [String] = []
            for await verification in Transaction.currentEntitlements {
                remember(verification)
                signed.append(verification.jwsRepresentation)
            }
            return signed
        }

        /// `Transaction.latest(for:)`, as JWS.
        ///
        /// - Parameter productId: The product.
        /// - Returns: The signed transaction, or `nil` when the customer never bought the product.
        public func latestTransaction(for productId: String) async throws -> String? {
            await Transaction.latest(for: productId)?.jwsRepresentation
        }

        /// `Product.SubscriptionInfo.status(for:)`: each status's state, transaction and renewal information (JWS).
        ///
        /// - Parameter groupId: The subscription group.
        /// - Returns: The statuses.
        /// - Throws: ``IAPError`` mapped from StoreKit's error.
        public func subscriptionStatuses(groupId: String) async throws -> [StoreSubscriptionStatus] {
            let statuses: [Product.SubscriptionInfo.Status]
            do {
                statuses = try await Product.SubscriptionInfo.status(for: groupId)
            } catch {
                throw Self.map(error)
            }
            return statuses.map { status in
                StoreSubscriptionStatus(
                    state: Self.subscriptionStatus(status.state),
                    signedTransaction: status.transaction.jwsRepresentation,
                    signedRenewalInfo: status.renewalInfo.jwsRepresentation
                )
            }
        }

        /// `AppTransaction.shared`, or `AppTransaction.refresh()`, as JWS.
        ///
        /// - Parameter refresh: Whether to fetch it again, which asks the customer to sign in.
        /// - Returns: The signed app transaction.
        /// - Throws: ``IAPError`` mapped from StoreKit's error.
        public func appTransaction(refresh: Bool) async throws -> String {
            do {
                let verification = refresh ? try await AppTransaction.refresh() : try await AppTransaction.shared
                return verification.jwsRepresentation
            } catch {
                throw Self.map(error)
            }
        }

        /// Finishes a transaction handed out before, or found in `Transaction.unfinished`.
        ///
        /// - Parameter transactionId: The transaction.
        /// - Throws: ``IAPError`` `.invalidArgument` for an id that is not a number.
        public func finish(transactionId: String) async throws {
            guard let id = UInt64(transactionId) else {
                throw IAPError(.invalidArgument, "the transaction id '\(transactionId)' is not a number")
            }
            if let transaction = handedOut.removeValue(forKey: id) {
                await transaction.finish()
                return
            }
            for await verification in Transaction.unfinished {
                let transaction = verification.unsafePayloadValue
                if transaction.id == id {
                    await transaction.finish()
                    return
                }
            }
        }

        /// `AppStore.sync()`.
        ///
        /// - Throws: ``IAPError`` mapped from StoreKit's error.
        public func sync() async throws {
            do {
                try await AppStore.sync()
            } catch {
                throw Self.map(error)
            }
        }

        // MARK: - Sheets

        /// `Transaction.beginRefundRequest(for:in:)` in the anchor given at creation.
        ///
        /// - Parameter transactionId: The transaction.
        /// - Returns: Whether the request was sent.
        /// - Throws: ``IAPError`` `.invalidConfiguration` without an anchor, `.unsupportedOperation` on tvOS and
        ///   watchOS; otherwise mapped from StoreKit's error (`refundAlreadyRequested`, `refundRequestFailed`, ...).
        public func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
            guard let id = UInt64(transactionId) else {
                throw IAPError(.invalidArgument, "the transaction id '\(transactionId)' is not a number")
            }
            return try await Self.presentRefundSheet(for: id, anchor: presentationAnchor)
        }

        /// `AppStore.showManageSubscriptions(in:)`, or `(in:subscriptionGroupID:)` from iOS 17, in the anchor's
        /// scene.
        ///
        /// - Parameter groupId: Only this subscription group (iOS 17 and later; all of them before), or `nil`.
        /// - Throws: ``IAPError`` `.invalidConfiguration` without an anchor, `.unsupportedOperation` on macOS, tvOS
        ///   and watchOS; otherwise mapped from StoreKit's error.
        public func showManageSubscriptions(groupId: String?) async throws {
            try await Self.presentManageSubscriptions(groupId: groupId, anchor: presentationAnchor)
        }

        /// `AppStore.presentOfferCodeRedeemSheet(in:)` in the anchor's scene (from a view controller on macOS 15).
        ///
        /// - Throws: ``IAPError`` `.invalidConfiguration` without an anchor, `.unsupportedOperation` on tvOS,
        ///   watchOS and macOS before 15; otherwise mapped from StoreKit's error.
        public func presentOfferCodeRedemption() async throws {
            try await Self.presentOfferCodeSheet(anchor: presentationAnchor)
        }

        #if os(visionOS)
            @MainActor
            private static func purchase(
                _ product: Product,
                options: Set<Product.PurchaseOption>,
                anchor: (@MainActor @Sendable () -> PresentationAnchor?)?
            ) async throws -> Product.PurchaseResult {
                let scene = try place(anchor, for: "confirm purchases")
                return try await product.purchase(confirmIn: scene, options: options)
            }
        #endif

        #if os(iOS) || os(visionOS) || os(macOS)
            /// The anchor's window scene or view controller, or why there is none.
            @MainActor
            private static func place(
                _ anchor: (@MainActor @Sendable () -> PresentationAnchor?)?,
                for purpose: String
            ) throws -> PresentationAnchor {
                guard let anchor else {
                    throw IAPError(
                        .invalidConfiguration,
                        "StoreKitStoreClient was created without a presentation anchor to \(purpose) in"
                    )
                }
                guard let place = anchor() else {
                    throw IAPError(.invalidConfiguration, "there is no window to \(purpose) in")
                }
                return place
            }
        #endif

        @MainActor
        private static func presentRefundSheet(
            for id: UInt64,
            anchor: (@MainActor @Sendable () -> PresentationAnchor?)?
        ) async throws -> RefundRequestStatus {
            #if os(iOS) || os(visionOS) || os(macOS)
                let place = try place(anchor, for: "show the refund sheet")
                let status: Transaction.RefundRequestStatus
                do {
                    status = try await Transaction.beginRefundRequest(for: id, in: place)
                } catch {
                    throw map(error)
                }
                switch status {
                case .success: return .success
                case .userCancelled: return .userCancelled
                // An answer this version does not know is not taken for a sent request.
                @unknown default: return .userCancelled
                }
            #else
                _ = (id, anchor)
                throw IAPError(.unsupportedOperation, "refund requests are not shown on this platform")
            #endif
        }

        @MainActor
        private static func presentManageSubscriptions(
            groupId: String?,
            anchor: (@MainActor @Sendable () -> PresentationAnchor?)?
        ) async throws {
            #if os(iOS) || os(visionOS)
                let scene = try place(anchor, for: "show the subscriptions")
                do {
                    if let groupId {
                        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *) {
                            try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: groupId)
                            return
                        }
                    }
                    try await AppStore.showManageSubscriptions(in: scene)
                } catch {
                    throw map(error)
                }
            #else
                _ = (groupId, anchor)
                throw IAPError(.unsupportedOperation, "the manage-subscriptions sheet is not shown on this platform")
            #endif
        }

        @MainActor
        private static func presentOfferCodeSheet(anchor: (@MainActor @Sendable () -> PresentationAnchor?)?)
            async throws
        {
            #if os(iOS) || os(visionOS)
                let scene = try place(anchor, for: "show the offer code sheet")
                do {
                    try await AppStore.presentOfferCodeRedeemSheet(in: scene)
                } catch {
                    throw map(error)
                }
            #elseif os(macOS)
                guard #available(iOS 16.0, macOS 15.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *) else {
                    throw IAPError(.unsupportedOperation, "the offer code sheet needs macOS 15")
                }
                let controller = try place(anchor, for: "show the offer code sheet")
                do {
                    try await AppStore.presentOfferCodeRedeemSheet(from: controller)
                } catch {
                    throw map(error)
                }
            #else
                _ = anchor
                throw IAPError(.unsupportedOperation, "the offer code sheet is not shown on this platform")
            #endif
        }

        private func remember(_ verification: VerificationResult<Transaction>) {
            let transaction = verification.unsafePayloadValue
            handedOut[transaction.id] = transaction
        }

        // MARK: - Mapping

        /// The package's product type for StoreKit's.
        private static func productType(_ type: Product.ProductType) -> ProductType {
            switch type {
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            case .autoRenewable: .autoRenewableSubscription
            case .nonRenewable: .nonRenewingSubscription
            default: ProductType(rawValue: type.rawValue)
            }
        }

        /// The package's subscription status for StoreKit's renewal state (Apple's raw values for both).
        private static func subscriptionStatus(_ state: Product.SubscriptionInfo.RenewalState) -> SubscriptionStatus {
            switch state {
            case .subscribed: .active
            case .expired: .expired
            case .inBillingRetryPeriod: .billingRetry
            case .inGracePeriod: .billingGracePeriod
            case .revoked: .revoked
            default: SubscriptionStatus(rawValue: Int32(truncatingIfNeeded: state.rawValue))
            }
        }

        /// Maps StoreKit's errors to ``IAPError``s whose codes ``PurchaseFailureKind`` classifies.
        private static func map(_ error: any Error) -> IAPError {
            if let error = error as? IAPError {
                return error
            }
            if let error = error as? StoreKitError {
                return map(error)
            }
            if let error = error as? Product.PurchaseError {
                return map(error)
            }
            if #available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *),
                let error = error as? Transaction.RefundRequestError
            {
                switch error {
                case .duplicateRequest:
                    return IAPError(.refundAlreadyRequested, "a refund was already requested for this purchase")
                case .failed:
                    return IAPError(
                        .refundRequestFailed,
                        "the App Store could not take the refund request",
                        isRetryable: true
                    )
                @unknown default:
                    return IAPError(.refundRequestFailed, "the refund request failed: \(error)")
                }
            }
            return IAPError(.internalError, "StoreKit failed: \(error)", isRetryable: true)
        }

        private static func map(_ error: StoreKitError) -> IAPError {
            switch error {
            case .userCancelled:
                return IAPError(.userCancelled, "the customer cancelled")
            case .networkError(let underlying):
                return IAPError(
                    .transportFailure,
                    "the App Store could not be reached: \(underlying.localizedDescription)",
                    isRetryable: true
                )
            case .notAvailableInStorefront:
                return IAPError(.purchaseNotAllowed, "this is not available in the customer's storefront")
            case .notEntitled:
                return IAPError(.invalidConfiguration, "the app is not entitled to this StoreKit feature")
            case .systemError(let underlying):
                return IAPError(.internalError, "StoreKit failed: \(underlying)", isRetryable: true)
            case .unknown:
                return IAPError(.internalError, "StoreKit failed for an unknown reason", isRetryable: true)
            default:
                if #available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *),
                    case .unsupported = error
                {
                    return IAPError(.unsupportedOperation, "StoreKit does not support this for the product")
                }
                return IAPError(.internalError, "StoreKit failed: \(error)", isRetryable: true)
            }
        }

        private static func map(_ error: Product.PurchaseError) -> IAPError {
            switch error {
            case .productUnavailable:
                return IAPError(.unknownProduct, "the product is not available for purchase")
            case .purchaseNotAllowed:
                return IAPError(.purchaseNotAllowed, "purchases are not allowed on this device")
            case .invalidQuantity:
                return IAPError(.invalidArgument, "the quantity is not allowed for this product")
            case .ineligibleForOffer:
                return IAPError(.offerIneligible, "the customer is not eligible for the offer")
            case .invalidOfferIdentifier:
                return IAPError(.offerInvalid, "the App Store does not know the offer, or it is not active")
            case .invalidOfferPrice:
                return IAPError(.offerInvalid, "the offer's price is no longer valid")
            case .invalidOfferSignature:
                return IAPError(.offerInvalid, "the offer's signature does not verify")
            case .missingOfferParameters:
                return IAPError(.offerInvalid, "the offer lacks a parameter")
            @unknown default:
                return IAPError(.invalidArgument, "StoreKit refused the purchase: \(error)")
            }
        }
    }
#endif
