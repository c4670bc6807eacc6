import Foundation
import IAPCore
import IAPCrypto

/// `iap verify`: verifies App Store signed data and prints its payload.
enum VerifyCommand {
    static let usage = """
        usage: iap verify [--root FILE.der]... [--bundle-id ID] [--environment Production|Sandbox|Xcode|LocalTesting]
                          [--app-apple-id N] [--at now|MILLIS] [--kind auto|transaction|renewal|notification|app-transaction]
                          [--batch] [--strict-x509] [FILE|-]

        Verifies App Store signed data (JWS ES256, x5c chain to Apple Root CA - G3 unless --root is given)
        and prints the decoded payload as JSON. With --batch, the input holds one JWS per line and the
        output one JSON object per line.
        Exit status: 0 verified (or, with --batch, every line processed), 1 rejected, 2 usage error.
        """

    static func run(_ arguments: [String]) -> Never {
        let parsed = Arguments.forCommand(
            arguments,
            options: ["root", "bundle-id", "environment", "app-apple-id", "at", "kind"],
            flags: ["batch", "strict-x509"],
            usage: usage
        )
        let settings: Settings
        do {
            settings = try Settings(parsed)
        } catch {
            exitWithUsage(error, usage: usage)
        }

        let path: String?
        do {
            path = try parsed.singlePositional()
        } catch {
            Output.error("error: usage: \(error.message)")
            terminate(.usage)
        }
        if parsed.has("batch") {
            runBatch(path: path, settings: settings)
        }
        let data: Data
        do {
            data = try Input.read(path)
        } catch {
            Output.error("error: \(error.message)")
            terminate(.usage)
        }

        let verifier: AppStoreSignedDataVerifier
        do {
            verifier = try AppStoreSignedDataVerifier(configuration: settings.configuration)
        } catch let error as IAPError {
            Output.error("error: usage: \(error.message)")
            terminate(.usage)
        } catch {
            Output.error("error: usage: \(error)")
            terminate(.usage)
        }
        for note in settings.skippedChecks {
            Output.error("note: \(note)")
        }

        do {
            let verified = try verifier.verify(Input.token(from: data), as: settings.kind)
            Output.write(try payloadJSON(verified))
            Output.write("\n")
            terminate(.success)
        } catch let error as IAPError {
            Output.error("error: \(error.code.rawValue): \(error.message)")
            terminate(.rejected)
        } catch {
            Output.error("error: \(IAPError.Code.internalError.rawValue): \(error)")
            terminate(.rejected)
        }
    }

    /// `--batch`: reads one JWS per line as the input streams in, and writes one JSON object per line, in order.
    static func runBatch(path: String?, settings: Settings) -> Never {
        let descriptor: Int32
        do {
            descriptor = try Input.descriptor(path)
        } catch {
            Output.error("error: \(error.message)")
            terminate(.usage)
        }
        let verifier: AppStoreSignedDataVerifier
        do {
            verifier = try AppStoreSignedDataVerifier(configuration: settings.configuration)
        } catch {
            Output.error("error: usage: \(error)")
            terminate(.usage)
        }
        for note in settings.skippedChecks {
            Output.error("note: \(note)")
        }
        // A pipe or a terminal may be waiting for each answer; a regular file is written in large blocks.
        var status = stat()
        let streaming = fstat(descriptor, &status) != 0 || (status.st_mode & S_IFMT) != S_IFREG
        var reader = LineReader(descriptor: descriptor)
        while let line = reader.next() {
            Output.line(batchLine(line, verifier: verifier, kind: settings.kind))
            if streaming {
                Output.flush()
            }
        }
        terminate(.success)
    }

    /// One line of `--batch` output.
    static func batchLine(_ line: String, verifier: AppStoreSignedDataVerifier, kind: SignedDataKind?) -> String {
        do {
            let verified = try verifier.verify(Input.token(fromText: line), as: kind)
            let payload = String(decoding: try payloadJSON(verified), as: UTF8.self)
            return #"{"ok":true,"kind":"\#(verified.kind.rawValue)","payload":\#(payload)}"#
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "unexpected failure")
            return errorLine(failure)
        }
    }

    private struct ErrorLine: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
        }
        let ok = false
        let error: Detail
    }

    static func errorLine(_ error: IAPError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let line = ErrorLine(error: .init(code: error.code.rawValue, message: error.message))
        guard let data = try? encoder.encode(line) else {
            return #"{"ok":false,"error":{"code":"internalError","message":"encoding failed"}}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The decoded payload with Apple's field names.
    static func payloadJSON(_ verified: VerifiedSignedData) throws -> Data {
        let encoder = AppStoreJSON.makeEncoder()
        switch verified {
        case .transaction(let payload): return try encoder.encode(payload)
        case .renewal(let payload): return try encoder.encode(payload)
        case .notification(let notification): return try encoder.encode(notification.payload)
        case .appTransaction(let payload): return try encoder.encode(payload)
        }
    }

    /// The verifier configuration the options ask for.
    struct Settings {
        var configuration = AppStoreSignedDataVerifier.Configuration(bundleId: nil, environment: nil)
        var kind: SignedDataKind?
        var skippedChecks: [String] = []

        init(_ arguments: Arguments) throws(Arguments.UsageError) {
            var roots: [X509Certificate] = []
            for path in arguments.values("root") {
                roots.append(try Self.loadCertificate(path))
            }
            configuration.rootCertificates = roots
            configuration.bundleId = try arguments.value("bundle-id")
            if configuration.bundleId == nil {
                configuration.skippedChecks.insert(.bundleId)
                skippedChecks.append("no --bundle-id: the bundle id is not checked")
            }
            if let environment = try arguments.value("environment") {
                let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
                guard let match = known.first(where: { $0.rawValue == environment }) else {
                    throw Arguments.UsageError(
                        message:
                            "--environment must be Production, Sandbox, Xcode or LocalTesting, not '\(environment)'"
                    )
                }
                configuration.environments = [match]
                if match == .xcode || match == .localTesting {
                    // Naming the Xcode environment is the explicit opt-in to data Xcode signed itself.
                    configuration.acceptsXcodeSignedData = true
                }
            } else {
                configuration.skippedChecks.insert(.environment)
                skippedChecks.append("no --environment: the environment is not checked")
            }
            if let appAppleId = try arguments.value("app-apple-id") {
                guard let value = Int64(appAppleId), value > 0 else {
                    throw Arguments.UsageError(
                        message: "--app-apple-id must be a positive integer, not '\(appAppleId)'"
                    )
                }
                configuration.appAppleId = value
            } else {
                configuration.skippedChecks.insert(.appAppleId)
                skippedChecks.append("no --app-apple-id: the App Apple ID is not checked")
            }
            if let at = try arguments.value("at") {
                if at == "now" {
                    configuration.validationTime = .now
                } else if let millis = Int64(at), millis.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds) {
                    configuration.validationTime = .fixed(Date(millisecondsSince1970: millis))
                } else {
                    throw Arguments.UsageError(message: "--at must be 'now' or milliseconds since 1970, not '\(at)'")
                }
            }
            if let kind = try arguments.value("kind"), kind != "auto" {
                guard let match = SignedDataKind(rawValue: kind) else {
                    throw Arguments.UsageError(
                        message:
                            "--kind must be auto, transaction, renewal, notification or app-transaction, not '\(kind)'"
                    )
                }
                self.kind = match
            }
            configuration.strictX509 = arguments.has("strict-x509")
        }

        static func loadCertificate(_ path: String) throws(Arguments.UsageError) -> X509Certificate {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw Arguments.UsageError(
                    message: "cannot read root certificate \(path): \(error.localizedDescription)"
                )
            }
            do {
                if data.starts(with: Array("-----BEGIN".utf8)) {
                    return try X509Certificate(pemEncoded: String(decoding: data, as: UTF8.self))
                }
                return try X509Certificate(derEncoded: Array(data))
            } catch {
                throw Arguments.UsageError(message: "\(path) is not a DER or PEM certificate: \(error)")
            }
        }
    }
}
