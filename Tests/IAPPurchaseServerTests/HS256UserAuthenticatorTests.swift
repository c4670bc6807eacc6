import Foundation
import IAPCore
import IAPCrypto
import IAPPurchaseServer
import IAPInMemory
import Testing

/// The user tokens `iap serve` accepts: what a token may not say twice, and how long it may live.
@Suite("HS256UserAuthenticator: duplicate names and token lifetime")
struct HS256UserAuthenticatorTests {
    static let secret = Array("user-jwt-secret-for-tests-0123456789".utf8)
    static let now: Int64 = 1_767_225_600

    static func authenticator(maximumLifetime: Duration? = nil) throws -> HS256UserAuthenticator {
        let clock = ManualClock(now: Date(timeIntervalSince1970: TimeInterval(now)))
        guard let maximumLifetime else {
            return HS256UserAuthenticator(secret: try HMACSHA256(key: secret), clock: clock)
        }
        return HS256UserAuthenticator(
            secret: try HMACSHA256(key: secret),
            clock: clock,
            maximumLifetime: maximumLifetime
        )
    }

    /// A token of this header and these claims, as written, signed with the secret.
    static func token(_ claims: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#) throws -> String {
        let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let code = try HMACSHA256(key: secret).authenticationCode(for: Array(input.utf8))
        return input + "." + base64URL(code)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func refusal(_ token: String, _ users: HS256UserAuthenticator) -> IAPError? {
        do {
            _ = try users.verify(token)
            return nil
        } catch {
            return error as? IAPError
        }
    }

    @Test func aTokenThatNamesAClaimOrAHeaderMemberTwiceIsRefused() throws {
        let users = try Self.authenticator()
        let exp = Self.now + 3_600
        #expect(try users.verify(try Self.token(#"{"sub":"alice","exp":\#(exp)}"#)) == "alice")
        for claims in [
            #"{"sub":"alice","exp":\#(exp),"sub":"mallory"}"#,
            #"{"sub":"alice","exp":\#(exp),"s\u0075b":"mallory"}"#,
            #"{"exp":\#(exp),"sub":"alice","exp":\#(exp + 10)}"#,
        ] {
            let refusal = Self.refusal(try Self.token(claims), users)
            #expect(refusal?.code == .unauthenticated, "\(claims)")
            #expect(refusal?.message.contains("twice") == true, "\(claims)")
        }
        let twiceAlg = try Self.token(
            #"{"sub":"alice","exp":\#(exp)}"#,
            header: #"{"alg":"none","alg":"HS256","typ":"JWT"}"#
        )
        #expect(Self.refusal(twiceAlg, users)?.message.contains("twice") == true)
        // The same name inside a nested value is not a duplicate of the top level.
        let nested = try Self.token(#"{"sub":"alice","exp":\#(exp),"ctx":{"sub":"x","a":["sub"]}}"#)
        #expect(try users.verify(nested) == "alice")
    }

    @Test func aTokenLivesNoLongerThanTheMaximumCountedFromIatOrFromNow() throws {
        let users = try Self.authenticator()
        #expect(users.maximumLifetime == .seconds(86_400))
        let now = Self.now
        // exp - iat: 24 h is accepted, a second more is not, even when exp itself is near.
        #expect(try users.verify(try Self.token(#"{"sub":"a","iat":\#(now - 60),"exp":\#(now + 86_340)}"#)) == "a")
        let long = try Self.token(#"{"sub":"a","iat":\#(now - 86_000),"exp":\#(now + 401)}"#)
        #expect(Self.refusal(long, users)?.message.contains("lives longer") == true)
        // No iat: exp - now, and the token stays valid.
        #expect(try users.verify(try Self.token(#"{"sub":"a","exp":\#(now + 86_000)}"#)) == "a")
        let far = try Self.token(#"{"sub":"a","exp":\#(now + 86_401)}"#)
        #expect(Self.refusal(far, users)?.code == .unauthenticated)
        // Absurd and wrongly typed values are refused, not crashed on.
        for claims in [
            #"{"sub":"a","exp":1e308}"#, #"{"sub":"a","exp":1e308,"iat":\#(now)}"#,
            #"{"sub":"a","exp":\#(now + 60),"iat":-1e308}"#, #"{"sub":"a","exp":\#(now + 60),"iat":"yesterday"}"#,
            #"{"sub":"a","exp":1e400}"#,
        ] {
            #expect(Self.refusal(try Self.token(claims), users)?.code == .unauthenticated, "\(claims)")
        }
        // A shorter maximum is kept.
        let strict = try Self.authenticator(maximumLifetime: .seconds(600))
        #expect(try strict.verify(try Self.token(#"{"sub":"a","exp":\#(now + 600)}"#)) == "a")
        #expect(Self.refusal(try Self.token(#"{"sub":"a","exp":\#(now + 601)}"#), strict) != nil)
    }
}

extension HS256UserAuthenticatorTests {
    @Test func anIssueDateCannotStretchTheLifetime() throws {
        let users = try Self.authenticator()
        let far = Self.now + 30 * 86_400
        // An iat as far ahead as exp made the lifetime 0; it is refused, and so is a far exp with an honest iat.
        for claims in [
            #"{"sub":"alice","exp":1e308,"iat":1e308}"#,
            #"{"sub":"alice","exp":\#(far),"iat":\#(far - 60)}"#,
            #"{"sub":"alice","exp":\#(far),"iat":\#(Self.now)}"#,
        ] {
            #expect(Self.refusal(try Self.token(claims), users)?.code == .unauthenticated, "\(claims)")
        }
        let honest = #"{"sub":"alice","exp":\#(Self.now + 3_600),"iat":\#(Self.now)}"#
        #expect(try users.verify(try Self.token(honest)) == "alice")
    }
}
