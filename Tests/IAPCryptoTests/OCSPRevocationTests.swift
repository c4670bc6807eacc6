import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import Testing

/// The optional online revocation checks, against a local OCSP responder: `openssl ocsp` answering from an index of the
/// test PKI's certificates, signed by their issuers.
@Suite("OCSP revocation checks", .serialized)
struct OCSPRevocationTests {
    /// A responder made of the test PKI: each request is answered by `openssl ocsp` for the issuer whose index holds the
    /// certificate asked about.
    final class Responder: @unchecked Sendable {
        let directory: URL
        let pki: TestPKI
        let requests = LockedValue(0)

        init(pki: TestPKI, revoked: Set<String> = []) throws {
            self.pki = pki
            directory = FileManager.default.temporaryDirectory.appending(path: "ocsp-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Self.pem("CERTIFICATE", pki.root.derBytes).write(to: directory.appending(path: "root.pem"))
            try Self.pem("CERTIFICATE", pki.intermediate.derBytes)
                .write(to: directory.appending(path: "intermediate.pem"))
            try Data(pki.rootKey.pemRepresentation.utf8).write(to: directory.appending(path: "root.key"))
            try Data(pki.intermediateKey.pemRepresentation.utf8)
                .write(to: directory.appending(path: "intermediate.key"))
            for (name, certificate) in [("intermediate.index", pki.leaf), ("root.index", pki.intermediate)] {
                let serial = certificate.serialNumberHex.uppercased()
                let line =
                    revoked.contains(serial)
                    ? "R\t301231235959Z\t260101000000Z\t\(serial)\tunknown\t/CN=test\n"
                    : "V\t301231235959Z\t\t\(serial)\tunknown\t/CN=test\n"
                try Data(line.utf8).write(to: directory.appending(path: name))
            }
        }

        static func pem(_ label: String, _ der: [UInt8]) -> Data {
            let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return Data("-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n".utf8)
        }

        /// Answers one request body.
        func answer(_ body: Data) throws -> Data {
            requests.withLock { $0 += 1 }
            let request = directory.appending(path: "request-\(UUID().uuidString).der")
            let response = directory.appending(path: "response-\(UUID().uuidString).der")
            try body.write(to: request)
            let text = try Self.openssl(["ocsp", "-reqin", request.path, "-req_text"])
            let leafSerial = pki.leaf.serialNumberHex.uppercased()
            let issuer = text.uppercased().contains(leafSerial) ? "intermediate" : "root"
            _ = try Self.openssl([
                "ocsp", "-index", directory.appending(path: "\(issuer).index").path,
                "-CA", directory.appending(path: "\(issuer).pem").path,
                "-rsigner", directory.appending(path: "\(issuer).pem").path,
                "-rkey", directory.appending(path: "\(issuer).key").path,
                "-reqin", request.path, "-respout", response.path, "-ndays", "1",
            ])
            return try Data(contentsOf: response)
        }

        static func openssl(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(filePath: "/usr/bin/openssl")
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw IAPError(.internalError, "openssl \(arguments.first ?? "") failed")
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// A PKI valid now, a transaction it signed, and a verifier with online checks through `transport`.
    static func setup(revoked: (TestPKI) -> Set<String> = { _ in [] }) throws -> (
        TestPKI, String, Responder, (any Transport) -> RevocationCheckingVerifier
    ) {
        let now = SystemClock().now
        let pki = try TestPKI.generate(
            TestPKI.Options(notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400 * 30))
        )
        let signed = try JWSSigner(key: pki.leafKey, certificateChain: pki.x5c).sign(
            TransactionPayload(bundleId: "com.example.app", productId: "coins.100", environment: .sandbox)
        )
        let responder = try Responder(pki: pki, revoked: revoked(pki))
        let base = try AppStoreSignedDataVerifier(
            configuration: .init(rootCertificates: [pki.root], bundleId: "com.example.app", environments: [.sandbox])
        )
        let make: (any Transport) -> RevocationCheckingVerifier = { transport in
            RevocationCheckingVerifier(
                verifier: base,
                checker: OCSPRevocationChecker(
                    .init(
                        transport: transport,
                        roots: [pki.root],
                        responderURL: URL(string: "http://ocsp.test/ocsp")
                    )
                )
            )
        }
        return (pki, signed, responder, make)
    }

    @Test("good certificates pass, and the answers are kept: a second verification asks nobody")
    func good() async throws {
        let (_, signed, responder, make) = try Self.setup()
        let verifier = make(
            InProcessTransport { request in
                #expect(request.headers["Content-Type"] == "application/ocsp-request")
                return HTTPResponse(status: 200, body: try responder.answer(request.body ?? Data()))
            }
        )
        let payload = try await verifier.verifyTransaction(signed)
        #expect(payload.productId == "coins.100")
        #expect(responder.requests.withLock { $0 } == 2)
        _ = try await verifier.verifyTransaction(signed)
        #expect(responder.requests.withLock { $0 } == 2)
        #expect(verifier.checker.cachedAnswerCount == 2)
    }

    @Test("a revoked leaf or intermediate is refused: certificateRevoked")
    func revoked() async throws {
        for which in ["leaf", "intermediate"] {
            let (_, signed, responder, make) = try Self.setup { pki in
                [(which == "leaf" ? pki.leaf : pki.intermediate).serialNumberHex.uppercased()]
            }
            let verifier = make(
                InProcessTransport { request in
                    HTTPResponse(status: 200, body: try responder.answer(request.body ?? Data()))
                }
            )
            await #expect(throws: IAPError(.certificateRevoked), "\(which)") {
                _ = try await verifier.verifyTransaction(signed)
            }
        }
    }

    @Test("no answer is a retryable failure, and an answer of another signer does not verify")
    func failures() async throws {
        let (_, signed, _, make) = try Self.setup()
        let down = make(InProcessTransport { _ in throw IAPError(.transportFailure, "connection refused") })
        let error = await #expect(throws: IAPError.self) { _ = try await down.verifyTransaction(signed) }
        #expect(error?.code == .transportFailure)
        #expect(error?.isRetryable == true)

        let (_, _, stranger, _) = try Self.setup()  // another PKI's responder answers
        let forged = make(
            InProcessTransport { request in
                HTTPResponse(status: 200, body: try stranger.answer(request.body ?? Data()))
            }
        )
        await #expect(throws: IAPError(.certificateChainInvalid)) { _ = try await forged.verifyTransaction(signed) }
        let broken = make(InProcessTransport { _ in HTTPResponse(status: 500, body: Data()) })
        await #expect(throws: IAPError(.transportFailure)) { _ = try await broken.verifyTransaction(signed) }
    }

    @Test("Apple's signing certificate names Apple's OCSP responder")
    func appleResponder() throws {
        let leaf = try Fixtures.chainConstant("REAL_APPLE_SIGNING_CERTIFICATE_BASE64_ENCODED")
        let url = try #require(OCSPRevocationChecker.responderURL(of: leaf))
        #expect(url.host() == "ocsp.apple.com")
    }
}
