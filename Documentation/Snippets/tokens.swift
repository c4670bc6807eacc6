// The App Store Server API's bearer tokens, from the app's App Store Connect key (ServerAPI.md).
import IAPCrypto

let tokens: AppStoreServerAPITokenProvider = assumed()
