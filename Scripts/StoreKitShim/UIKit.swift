// The UIKit types IAPStoreKit names, declared for Scripts/typecheck-storekit.sh, which type-checks the StoreKit
// adapter on Linux. Only their names and isolation matter to the adapter; nothing here runs.

/// Apple: https://developer.apple.com/documentation/uikit/uiresponder
@MainActor
open class UIResponder {}

/// Apple: https://developer.apple.com/documentation/uikit/uiscene (iOS 13, tvOS 13, visionOS 1; not watchOS).
@available(iOS 13.0, tvOS 13.0, visionOS 1.0, *)
@available(watchOS, unavailable)
@MainActor
open class UIScene: UIResponder {}

/// Apple: https://developer.apple.com/documentation/uikit/uiwindowscene (iOS 13, tvOS 13, visionOS 1; not watchOS).
@available(iOS 13.0, tvOS 13.0, visionOS 1.0, *)
@available(watchOS, unavailable)
@MainActor
open class UIWindowScene: UIScene {}

/// Apple: https://developer.apple.com/documentation/uikit/uiviewcontroller
@available(watchOS, unavailable)
@MainActor
open class UIViewController: UIResponder {}
