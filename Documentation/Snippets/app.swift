// The app's own account: who is signed in, and the token its server accepts (AppIntegration.md).
import Foundation

struct Account: Sendable {
    var userId: String
    var token: String
}

let account: Account = assumed()
