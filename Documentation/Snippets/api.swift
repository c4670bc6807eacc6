// includes: tokens
// An App Store Server API client for the app (ServerAPI.md).
import IAPServerAPI

let client: AppStoreServerAPIClient = assumed()
let sandboxClient: AppStoreServerAPIClient = assumed()  // the same app, Sandbox environment
