// The integrator's own accounts service, which a fulfillment hook calls: idempotent by the key it is given.
protocol Accounts: Sendable {
    func grant(_ entitlements: [String], units: Int64, to user: String, key: String) async throws
    func revoke(_ entitlements: [String], units: Int64, from user: String, key: String) async throws
}

let accounts: any Accounts = assumed()
