// The ledger: any EntitlementStore (in memory, a file store, PostgreSQL, the reader's own).
import IAPCore

let ledger: any EntitlementStore = assumed()
