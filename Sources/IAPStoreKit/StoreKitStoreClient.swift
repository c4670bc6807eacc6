#if canImport(StoreKit)
    public import Foundation
    public import IAPCore
    import StoreKit
    #if canImport(UIKit) && !os(watchOS) && !os(tvOS)
        public import UIKit
    #elseif canImport(AppKit)
        public import AppKit
    #endif

    /// The ``StoreClient`` of a real device: a thin adapter over StoreKit 2.
    ///
    /// It passes every transaction through as StoreKit's `jwsRepresentation`, verified by StoreKit or not: the
    /// server verifies, and ``PurchaseCoordinator`` finishes a transaction only after the server confirmed it. It
    /// decides nothing else; every rule lives in `IAPCore`, where it is tested.
    ///
    /// | StoreClient | StoreKit 2 |
    /// |---|---|
    /// | `products(for:)` | `Product.products(for:)` |
    /// | `purchase(productId:appAccountToken:quantity:)` | `product.purchase(options: [.appAccountToken(_), .quantity(_)])` |
    /// | `transactionUpdates()` | `Transaction.updates` |
    /// | `allTransactions()` | `Transaction.all` |
    /// | `currentEntitlements()` | `Transaction.currentEntitlements` |
    /// | `finish(transactionId:)` | `transaction.finish()` |
    /// | `sync()` | `AppStore.sync()` |
    /// | `requestRefund(transactionId:)` | `Transaction.beginRefundRequest(for:in:)` |
    public actor StoreKitStoreClient: StoreClient {
        #if canImport(UIKit) && !os(watchOS) && !os(tvOS)
            /// Where the refund sheet is shown.
            public typealias RefundSheetAnchor = UIWindowScene
        #elseif canImport(AppKit)
            /// Where the refund sheet is shown.
            public typealias RefundSheetAnchor = NSViewController
        #else
            /// Refund sheets are not shown on this platform.
            public typealias RefundSheetAnchor = Never
        #endif

        private let refundSheetAnchor: (@MainActor @Sendable () -> RefundSheetAnchor?)?
        private var loadedProducts: [String: Product] = [:]
        /// Transactions handed out and not finished yet, to finish them by id.
        private var handedOut: [UInt64: Transaction] = [:]

        /// Creates the client.
        ///
        /// - Parameter refundSheetAnchor: Returns the window scene (view controller on macOS) the refund sheet is
        ///   shown in; without it ``requestRefund(transactionId:)`` fails. On visionOS, which has no scene-less
        ///   purchase, purchases are confirmed in this scene too (`purchase(confirmIn:options:)`), and fail without it.
        public init(refundSheetAnchor: (@MainActor @Sendable () -> RefundSheetAnchor?)? = nil) {
            self.refundSheetAnchor = refundSheetAnchor
        }

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
            return loaded.map { product in
                loadedProducts[product.id] = product
                return StoreProduct(
                    id: product.id,
                    displayName: product.displayName,
                    displayPrice: product.displayPrice,
                    type: ProductType(rawValue: product.type.rawValue)
                )
            }
        }

        /// Buys with `product.purchase(options: [.appAccountToken(_), .quantity(_)])` (on visionOS
        /// `product.purchase(confirmIn:options:)` in the anchor's scene).
        ///
        /// - Parameters:
        ///   - productId: The product.
        ///   - appAccountToken: The token signed into the transaction.
        ///   - quantity: How many.
        /// - Returns: The transaction's `jwsRepresentation`, pending or cancelled.
        /// - Throws: ``IAPError`` mapped from StoreKit's error.
        public func purchase(productId: String, appAccountToken: UUID, quantity: Int) async throws
            -> StorePurchaseResult
        {
            var product = loadedProducts[productId]
            if product == nil {
                _ = try await self.products(for: [productId])
                product = loadedProducts[productId]
            }
            guard let product else {
                throw IAPError(.unknownProduct, "StoreKit returned no product '\(productId)'")
            }
            let options: Set<Product.PurchaseOption> = [.appAccountToken(appAccountToken), .quantity(quantity)]
            let result: Product.PurchaseResult
            do {
                #if os(visionOS)
                    // visionOS has no scene-less purchase: the confirmation sheet needs the scene to show in.
                    result = try await Self.purchase(product, options: options, anchor: refundSheetAnchor)
                #else
                    result = try await product.purchase(options: options)
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

        /// `Transaction.updates`, as JWS.
        ///
        /// - Returns: The signed transactions StoreKit emits.
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

        /// `Transaction.beginRefundRequest(for:in:)` in the anchor given at creation.
        ///
        /// - Parameter transactionId: The transaction.
        /// - Returns: Whether the request was sent.
        /// - Throws: ``IAPError`` `.invalidConfiguration` without an anchor; otherwise mapped from StoreKit's error.
        public func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
            guard let id = UInt64(transactionId) else {
                throw IAPError(.invalidArgument, "the transaction id '\(transactionId)' is not a number")
            }
            guard let refundSheetAnchor else {
                throw IAPError(.invalidConfiguration, "StoreKitStoreClient was created without a refund sheet anchor")
            }
            return try await Self.presentRefundSheet(for: id, anchor: refundSheetAnchor)
        }

        #if os(visionOS)
            @MainActor
            private static func purchase(
                _ product: Product,
                options: Set<Product.PurchaseOption>,
                anchor: (@MainActor @Sendable () -> RefundSheetAnchor?)?
            ) async throws -> Product.PurchaseResult {
                guard let scene = anchor?() else {
                    throw IAPError(
                        .invalidConfiguration,
                        "on visionOS StoreKitStoreClient needs a window scene (refundSheetAnchor) to confirm purchases in"
                    )
                }
                return try await product.purchase(confirmIn: scene, options: options)
            }
        #endif

        @MainActor
        private static func presentRefundSheet(
            for id: UInt64,
            anchor: @MainActor @Sendable () -> RefundSheetAnchor?
        ) async throws -> RefundRequestStatus {
            #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || canImport(AppKit)
                guard let place = anchor() else {
                    throw IAPError(.invalidConfiguration, "there is no window to show the refund sheet in")
                }
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
                throw IAPError(.purchaseNotAllowed, "refund requests are not shown on this platform")
            #endif
        }

        private func remember(_ verification: VerificationResult<Transaction>) {
            let transaction = verification.unsafePayloadValue
            handedOut[transaction.id] = transaction
        }

        /// Maps StoreKit's errors to ``IAPError``s whose codes ``PurchaseFailureKind`` classifies.
        private static func map(_ error: any Error) -> IAPError {
            if let error = error as? IAPError {
                return error
            }
            if let error = error as? StoreKitError {
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
                    return IAPError(.purchaseNotAllowed, "the product is not available in the customer's storefront")
                case .notEntitled:
                    return IAPError(.purchaseNotAllowed, "the app is not entitled to this StoreKit feature")
                case .systemError(let underlying):
                    return IAPError(.internalError, "StoreKit failed: \(underlying)", isRetryable: true)
                default:
                    return IAPError(.internalError, "StoreKit failed: \(error)", isRetryable: true)
                }
            }
            if let error = error as? Product.PurchaseError {
                switch error {
                case .productUnavailable:
                    return IAPError(.unknownProduct, "the product is not available for purchase")
                case .purchaseNotAllowed:
                    return IAPError(.purchaseNotAllowed, "purchases are not allowed on this device")
                case .invalidQuantity:
                    return IAPError(.invalidArgument, "the quantity is not allowed for this product")
                default:
                    return IAPError(.invalidArgument, "StoreKit refused the purchase: \(error)")
                }
            }
            if let error = error as? Transaction.RefundRequestError {
                switch error {
                case .duplicateRequest:
                    return IAPError(.invalidArgument, "a refund was already requested for this purchase")
                default:
                    return IAPError(.internalError, "the refund request failed: \(error)", isRetryable: true)
                }
            }
            return IAPError(.internalError, "StoreKit failed: \(error)", isRetryable: true)
        }
    }
#endif
