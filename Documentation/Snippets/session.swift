// includes: app
// The app's session, whose token the delivery client sends (AppIntegration.md, "Setting up").
import IAPCore

actor Session {
    private var token: String?

    func signIn(token: String) {
        self.token = token
    }

    func currentToken() throws -> String {
        guard let token else { throw IAPError(.authenticationRequired, "nobody is signed in") }
        return token
    }
}
