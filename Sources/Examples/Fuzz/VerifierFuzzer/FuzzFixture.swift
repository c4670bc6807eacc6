import IAPCore
import IAPCrypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A wall clock stopped at one instant, so that runs do not depend on the day they happen.
struct FixedClock: WallClock {
    let now: Date
}

/// The process-wide state of the fuzzer: parsed roots and one TestPKI, created once on first use.
///
/// A global `let` is initialised lazily and exactly once (the Swift runtime guards it), and every stored value
/// is `Sendable`, so this is safe under Swift 6's strict concurrency checking.
struct FuzzFixture: Sendable {
    /// The instant "now" for every verifier: 2025-06-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_748_736_000)
    /// The validity period of generated PKIs: 2020-01-01 to 2040-01-01.
    static let notBefore = Date(timeIntervalSince1970: 1_577_836_800)
    static let notAfter = Date(timeIntervalSince1970: 2_208_988_800)

    /// The shared instance.
    static let shared: FuzzFixture = {
        do {
            return try FuzzFixture()
        } catch {
            fatalError("cannot set up the fuzz fixture: \(error)")
        }
    }()

    let appleRoot: X509Certificate
    /// The root of the PKI that minted the committed seed corpus (its keys were discarded).
    let seedRoot: X509Certificate
    /// The PKI generated for this process; it signs payload-mode inputs.
    let pki: TestPKI
    /// Signs with the generated leaf key and `x5c` = leaf, intermediate, root.
    let signer: JWSSigner

    init() throws {
        appleRoot = try AppleRootCertificates.appleRootCAG3()
        guard let seedRootDER = Data(base64Encoded: SeedRoot.base64) else {
            throw IAPError(.invalidConfiguration, "SeedRoot.base64 is not base64")
        }
        seedRoot = try X509Certificate(derEncoded: [UInt8](seedRootDER))
        pki = try Self.generatePKI()
        signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
    }

    static func generatePKI() throws -> TestPKI {
        try TestPKI.generate(TestPKI.Options(notBefore: notBefore, notAfter: notAfter))
    }

    enum Profile {
        /// Apple Root CA - G3 alone, the default configuration.
        case appleRoot
        /// The generated and the seed roots, accepting Xcode-signed data, no identity checks.
        case fuzzRoots
        /// Every root, strict X.509, validation at "now", and bundle id, environment and App Apple ID checks.
        case strictIdentity
    }

    func makeVerifier(_ profile: Profile) -> AppStoreSignedDataVerifier {
        let clock = FixedClock(now: Self.now)
        let configuration: AppStoreSignedDataVerifier.Configuration
        switch profile {
        case .appleRoot:
            configuration = .init(
                rootCertificates: [appleRoot],
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                clock: clock
            )
        case .fuzzRoots:
            configuration = .init(
                rootCertificates: [pki.root, seedRoot],
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                acceptsXcodeSignedData: true,
                clock: clock
            )
        case .strictIdentity:
            configuration = .init(
                rootCertificates: [pki.root, seedRoot, appleRoot],
                bundleId: "com.example.app",
                environment: .sandbox,
                appAppleId: 1_234_567_890,
                validationTime: .now,
                strictX509: true,
                cacheCapacity: 2,
                clock: clock
            )
        }
        do {
            return try AppStoreSignedDataVerifier(configuration: configuration)
        } catch {
            fatalError("cannot create the \(profile) verifier: \(error)")
        }
    }
}
