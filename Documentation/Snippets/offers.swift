// includes: app
// The app's coordinator and the in-app purchase key the server signs offers with (AppIntegration.md).
import IAPApp

let coordinator: PurchaseCoordinator = assumed()
/// The App Store Connect in-app purchase key (the `.p8` file's PEM text), its id and the team's issuer id.
let inAppPurchaseKeyPEM: String = assumed()
let inAppPurchaseKeyId: String = assumed()
let issuerId: String = assumed()
