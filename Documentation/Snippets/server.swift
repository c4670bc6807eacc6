// includes: catalog, wallet
// The pieces of a server, as "Compose a server" in GettingStarted.md builds them (the ledger is in ledger.swift).
import Foundation
import IAPCore
import IAPCrypto

let verifier: AppStoreSignedDataVerifier = assumed()
let clock: any WallClock = assumed()
