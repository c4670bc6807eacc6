// The AppKit types IAPStoreKit names, declared for Scripts/typecheck-storekit.sh, which type-checks the StoreKit
// adapter on Linux. Only their names and isolation matter to the adapter; nothing here runs.

/// Apple: https://developer.apple.com/documentation/appkit/nsresponder
@MainActor
open class NSResponder {}

/// Apple: https://developer.apple.com/documentation/appkit/nsviewcontroller
@MainActor
open class NSViewController: NSResponder {}
