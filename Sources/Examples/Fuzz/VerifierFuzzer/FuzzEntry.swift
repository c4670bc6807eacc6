import Foundation
import IAPCore
import IAPCrypto

/// The code every fuzz input runs through, shared by the libFuzzer binary and the corpus replayer.
///
/// One input is used four ways:
/// 1. as a compact JWS (lossy UTF-8), through a verifier trusting Apple Root CA - G3, a verifier trusting the
///    fuzzer's roots (accepting Xcode data), ``AppStoreSignedDataVerifier/detectKind(_:)``, each typed entry, and
///    a strict verifier with identity checks that sees the token twice (the second time from its chain cache);
/// 2. when it starts with `{`, as a JWS payload, signed on the spot with the fuzzer's TestPKI and verified like
///    a token, so that mutations reach payload decoding, identity checks and nested signed data;
/// 3. as raw bytes, through `X509Certificate(derEncoded:)` and `P256PublicKey(derRepresentation:)`;
/// 4. as text, through `X509Certificate(pemEncoded:)`;
/// 5. as a transaction payload, through the fast decoder, whose answer must equal `JSONDecoder`'s.
///
/// Every error must be an ``IAPError``; anything else stops the process, which the fuzzer reports. Signed data a
/// verifier accepts must hold no key twice in any object of its header or payload (nor of the signed data nested
/// in a notification), as an independent count shows: the JSON text's members against the members Foundation's
/// parser keeps.
enum FuzzEntry {
    static func run(_ input: UnsafeRawBufferPointer) {
        let fixture = FuzzFixture.shared
        let bytes = [UInt8](input)
        let text = String(decoding: bytes, as: UTF8.self)

        exercise(token: text, fixture: fixture)

        // The fast transaction decoder must agree with JSONDecoder on everything it accepts.
        if let fast = FastTransactionDecoder.decode(input) {
            let full = try? AppStoreJSON.makeDecoder().decode(TransactionPayload.self, from: Data(bytes))
            guard full == fast else {
                fatalError("the fast transaction decoder and JSONDecoder disagree on an input")
            }
        }

        if bytes.first == UInt8(ascii: "{") {
            // Signing cannot fail on input; a failure here is a bug worth stopping for.
            let token: String
            do {
                token = try fixture.signer.sign(payload: Data(bytes))
            } catch {
                fatalError("signing a fuzzed payload failed: \(error)")
            }
            exercise(token: token, fixture: fixture)
        }

        expectIAPError("X509Certificate(derEncoded:)") { _ = try X509Certificate(derEncoded: bytes) }
        expectIAPError("P256PublicKey(derRepresentation:)") { _ = try P256PublicKey(derRepresentation: bytes) }
        expectIAPError("X509Certificate(pemEncoded:)") { _ = try X509Certificate(pemEncoded: text) }
    }

    private static func exercise(token: String, fixture: FuzzFixture) {
        // Fresh verifiers per input keep the chain cache from carrying state between inputs.
        let apple = fixture.makeVerifier(.appleRoot)
        expectIAPError("Apple root verify(_:as: nil)") { _ = try apple.verify(token, as: nil) }

        let test = fixture.makeVerifier(.fuzzRoots)
        let detected = result("detectKind") { try test.detectKind(token) }
        let verified = result("verify(_:as: nil)") { try test.verify(token, as: nil) }
        if let verified {
            // What verify(_:as: nil) accepted, detectKind must have classified the same way.
            guard let detected, detected == kind(of: verified) else {
                fatalError(
                    "verify(_:as: nil) returned \(kind(of: verified)) but detectKind gave \(String(describing: detected))"
                )
            }
            _ = String(describing: verified)
            requireDistinctKeys(token, verified)
        }
        let transaction = result("transaction") { try test.transaction(token) }
        let renewal = result("renewalInfo") { try test.renewalInfo(token) }
        let notification = result("notification") { try test.notification(token) }
        let appTransaction = result("appTransaction") { try test.appTransaction(token) }
        if let verified {
            let typedAgrees =
                switch verified {
                case .transaction(let payload): transaction == payload
                case .renewal(let payload): renewal == payload
                case .notification(let payload): notification == payload
                case .appTransaction(let payload): appTransaction == payload
                }
            guard typedAgrees else {
                fatalError("verify(_:as: nil) and the typed entry disagree on the same token")
            }
        }

        let strict = fixture.makeVerifier(.strictIdentity)
        let first = result("strict verify, cold") { try strict.verify(token) }
        let second = result("strict verify, cached") { try strict.verify(token) }
        guard first == second else {
            fatalError(
                "the chain cache changed the outcome: \(String(describing: first)) then \(String(describing: second))"
            )
        }
    }

    /// Stops the process when accepted signed data holds a key twice in one object: then two JSON readers could
    /// see two different documents under one signature.
    private static func requireDistinctKeys(_ token: String, _ verified: VerifiedSignedData) {
        var tokens = [token]
        if case .notification(let notification) = verified {
            tokens += [
                notification.payload.data?.signedTransactionInfo, notification.payload.data?.signedRenewalInfo,
                notification.payload.appData?.signedAppTransactionInfo,
            ].compactMap { $0 }
        }
        for token in tokens {
            for segment in token.split(separator: ".").prefix(2) {
                guard let json = Base64.decodeURL(segment), repeatsAKey(json) else { continue }
                fatalError("a verifier accepted signed data whose JSON holds a key twice in one object")
            }
        }
    }

    /// Whether JSON text holds more object members than Foundation's parser keeps: a key given twice in one
    /// object. Counted without the package's code: every `:` outside a string separates one member.
    static func repeatsAKey(_ json: [UInt8]) -> Bool {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed]) else {
            return false
        }
        func kept(_ value: Any) -> Int {
            if let object = value as? [String: Any] {
                return object.count + object.values.reduce(0) { $0 + kept($1) }
            }
            if let array = value as? [Any] {
                return array.reduce(0) { $0 + kept($1) }
            }
            return 0
        }
        var members = 0
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ":") {
                members += 1
            }
        }
        return members > kept(parsed)
    }

    /// How the Apple-root and fuzz-root verifiers judge an input read as a token, for `--verbose` replays.
    static func outcome(_ input: UnsafeRawBufferPointer) -> String {
        let fixture = FuzzFixture.shared
        let token = String(decoding: input, as: UTF8.self)
        func judge(_ verifier: AppStoreSignedDataVerifier) -> String {
            do {
                return "ok \(kind(of: try verifier.verify(token, as: nil)))"
            } catch let error as IAPError {
                return error.code.rawValue
            } catch {
                return "\(type(of: error))"
            }
        }
        return
            "apple: \(judge(fixture.makeVerifier(.appleRoot))), fuzz roots: \(judge(fixture.makeVerifier(.fuzzRoots)))"
    }

    private static func kind(of data: VerifiedSignedData) -> SignedDataKind {
        switch data {
        case .transaction: .transaction
        case .renewal: .renewal
        case .notification: .notification
        case .appTransaction: .appTransaction
        }
    }

    private static func result<T>(_ label: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch is IAPError {
            return nil
        } catch {
            fatalError("\(label) threw \(type(of: error)), not IAPError: \(error)")
        }
    }

    private static func expectIAPError(_ label: String, _ body: () throws -> Void) {
        _ = result(label, body)
    }
}
