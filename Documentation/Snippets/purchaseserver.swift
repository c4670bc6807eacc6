// includes: catalog, accounts
// The pieces of an embedded purchase server, as the program of Server.md builds them.
import Foundation
import IAPCore
import IAPCrypto
import IAPPurchaseServer
import IAPServerAPI

let site: any LedgerSite = assumed()
let verifier: AppStoreSignedDataVerifier = assumed()
let users: HS256UserAuthenticator = assumed()
let service: ServiceTokenAuthenticator = assumed()
