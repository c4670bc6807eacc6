public import IAPCore
/// The products the store knows, and the ids it does not, with what it takes to fix them.
public struct ProductLookup: Sendable, Hashable {
    /// A product id the store did not return.
    public struct MissingProduct: Sendable, Hashable {
        /// The product id asked for.
        public var productId: String
        /// The app's bundle id.
        public var bundleId: String
        /// The App Store environment the app runs against.
        public var environment: AppStoreEnvironment
        /// The app's version.
        public var appVersion: String

        /// An error that says what to check.
        public var error: IAPError {
            IAPError(
                .unknownProduct,
                "the App Store returned no product '\(productId)' for \(bundleId) (\(environment.rawValue), app "
                    + "version \(appVersion)): check that the id matches App Store Connect (or the StoreKit "
                    + "configuration file), that the product is cleared for sale and its agreements are signed, "
                    + "and that the bundle id is the one it was created for"
            )
        }
    }

    /// The products found, in the order asked for.
    public var products: [StoreProduct]
    /// The ids the store did not return.
    public var missing: [MissingProduct]
}
