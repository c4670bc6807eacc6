import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap verify`: verifies App Store signed data and prints its payload.
enum VerifyCommand {
    /// The options that configure the verifier, shared with `iap ledger ingest`.
    static let verifierOptions: [CommandSpec.Option] = [
        .value("root", "FILE.der", "trust this root (DER or PEM) instead of Apple Root CA - G3", repeatable: true),
        .value("bundle-id", "ID", "reject data of another app"),
        .value(
            "environment",
            "LIST",
            "accept data of these environments only: Production, Sandbox, Xcode or LocalTesting, or a "
                + "comma-separated list (Production,Sandbox: a production server that takes App Review's purchases)"
        ),
        .value("app-apple-id", "N", "reject data of another App Apple ID"),
        .flag("strict-x509", "apply strict X.509 (RFC 5280) checks to the certificate chain"),
    ]

    static let spec = CommandSpec(
        name: "verify",
        summary: "verify App Store signed data (JWS) and print its payload",
        synopsis: [
            "[--root FILE.der]... [--bundle-id ID] [--environment LIST]",
            "  [--app-apple-id N] [--at now|MILLIS|ISO8601]",
            "  [--kind auto|transaction|renewal|notification|app-transaction] [--batch] [--strict-x509] [FILE|-]",
        ],
        discussion: """
            Verifies App Store signed data (JWS ES256, x5c chain to Apple Root CA - G3 unless --root is given)
            read from FILE or standard input, and prints the decoded payload as JSON with Apple's field names.
            A notification body {"signedPayload": ...} is unwrapped. A rejection prints one line
            'error: <code>: <message>' on standard error. With --batch, the input holds one JWS per line and the
            output one JSON object per line, in input order: {"ok":true,"kind":...,"payload":...} or
            {"ok":false,"error":{"code":...,"message":...}}; the lines are verified on every core, each answer is
            written as soon as the lines before it are answered, and a pipe gets every answer as soon as all the
            lines it sent are answered. A line over 1 MiB is answered malformedSignedData without being held in
            memory. Each check not asked for is named in a note.

            Exit status: 0 verified (or, with --batch, every line processed), 1 rejected, 2 usage error.
            """,
        options: verifierOptions + [
            .value(
                "at",
                "INSTANT",
                "validate the chain at now, MILLIS or an ISO 8601 time (default: the data's signedDate)"
            ),
            .value(
                "kind",
                "KIND",
                "what the data must be: auto (default), transaction, renewal, notification, app-transaction"
            ),
            .flag("batch", "one JWS per input line, one JSON object per output line"),
        ],
        examples: [
            "iap verify --bundle-id com.example.app --environment Production --app-apple-id 1234567890 tx.jws",
            "iap verify --batch --root root.der < tokens.txt",
            "iap verify --bundle-id com.example.app --environment Production,Sandbox --app-apple-id 1234567890 tx.jws",
        ]
    )

    static func run(_ arguments: [String]) -> Never {
        let parsed = spec.parse(arguments)
        let settings: Settings
        do {
            settings = try Settings(parsed)
        } catch {
            spec.fail(error)
        }

        let path: String?
        do {
            path = try parsed.singlePositional()
        } catch {
            spec.fail(error)
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
            spec.fail(.init(message: error.message))
        } catch {
            spec.fail(.init(message: "\(error)"))
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

    /// `--batch`: reads one JWS per line as the input streams in, verifies the lines on every core, and writes one
    /// JSON object per line, in input order.
    static func runBatch(path: String?, settings: Settings) -> Never {
        let descriptor: Int32
        do {
            descriptor = try Input.descriptor(path)
        } catch {
            Output.error("error: \(error.message)")
            terminate(.usage)
        }
        // One verifier per core: each keeps its own chain cache, so the workers share no lock.
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let verifiers: [AppStoreSignedDataVerifier]
        do {
            verifiers = try (0..<workers).map { _ in
                try AppStoreSignedDataVerifier(configuration: settings.configuration)
            }
        } catch {
            spec.fail(.init(message: (error as? IAPError)?.message ?? "\(error)"))
        }
        for note in settings.skippedChecks {
            Output.error("note: \(note)")
        }
        // A pipe or a terminal may be waiting for each answer; a regular file is written in large blocks.
        var status = stat()
        let streaming = fstat(descriptor, &status) != 0 || (status.st_mode & S_IFMT) != S_IFREG
        #if os(Linux)
            if (status.st_mode & S_IFMT) == S_IFIFO {
                // A larger pipe (1 MiB, the unprivileged limit; F_SETPIPE_SZ) lets the writer get ahead by about 250
                // tokens instead of 16, so neither side is woken for every few lines. Best effort: the default
                // 64 KiB pipe works too.
                let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ, which Glibc's module does not export
                _ = fcntl(descriptor, setPipeSize, Int32(1 << 20))
            }
        #endif
        VerifyBatch(descriptor: descriptor, streaming: streaming, verifiers: verifiers, kind: settings.kind).run()
        terminate(.success)
    }

    /// The decoded payload with Apple's field names, as `AppStoreJSON.makeEncoder()` writes it.
    static func payloadJSON(_ verified: VerifiedSignedData) throws -> Data {
        var writer = AppStoreJSONWriter()
        try writer.append(verified)
        return Data(writer.bytes)
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
            if let text = try arguments.value("environment") {
                let environments = try EnvironmentList.parse(
                    text,
                    allowed: [.production, .sandbox, .xcode, .localTesting]
                )
                configuration.environments = Set(environments)
                if environments.contains(.xcode) || environments.contains(.localTesting) {
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
                } else {
                    configuration.validationTime = .fixed(try TextDate.instant(at, option: "at"))
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
