// The integrator's own accounts service, which a fulfillment hook calls: idempotent by the key it is given.
protocol Accounts: Sendable {
    func grant(_ entitlements: [String], units: Int64, to user: String, key: String) async throws
    func revoke(_ entitlements: [String], units: Int64, from user: String, key: String) async throws
    // Takes back what the grant `undoing` gave, once per key; a grant it never applied is recorded as cancelled.
    func revoke(_ entitlements: [String], units: Int64, from user: String, key: String, undoing: String?) async throws
    // Records the refunded share (thousandths of a percent) of a purchase whose access is kept, once per key.
    func recordRefund(share: Int32, of grant: String, for user: String, key: String, test: Bool) async throws
    // As grant(_:units:to:key:), with sandbox and test purchases kept apart from revenue.
    func grant(_ entitlements: [String], units: Int64, to user: String, key: String, test: Bool) async throws
}

let accounts: any Accounts = assumed()
