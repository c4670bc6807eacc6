// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "swift-iap",
    // The floor: Swift's `Clock` and `Duration`, which the package sleeps and times out with, need iOS 16 and
    // macOS 13. Anything newer is behind `if #available` (Scripts/typecheck-storekit.sh checks the StoreKit adapter).
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "IAPCore", targets: ["IAPCore"]),
        .library(name: "IAPServerAPI", targets: ["IAPServerAPI"]),
        .library(name: "IAPLegacyReceipts", targets: ["IAPLegacyReceipts"]),
        .library(name: "IAPWebhook", targets: ["IAPWebhook"]),
        .library(name: "IAPApp", targets: ["IAPApp"]),
        .library(name: "IAPStoreKit", targets: ["IAPStoreKit"]),
        .library(name: "IAPCrypto", targets: ["IAPCrypto"]),
        .library(name: "IAPStorageFile", targets: ["IAPStorageFile"]),
        .library(name: "IAPStoragePostgres", targets: ["IAPStoragePostgres"]),
        .library(name: "IAPTransportURLSession", targets: ["IAPTransportURLSession"]),
        .library(name: "IAPHTTPServer", targets: ["IAPHTTPServer"]),
        .library(name: "IAPPurchaseServer", targets: ["IAPPurchaseServer"]),
        .library(name: "IAPInMemory", targets: ["IAPInMemory"]),
        .library(name: "IAPConformance", targets: ["IAPConformance"]),
        .library(name: "IAPTesting", targets: ["IAPTesting"]),
        .executable(name: "iap", targets: ["iap"]),
        .executable(name: "iap-bench", targets: ["iap-bench"]),
    ],
    targets: [
        // MARK: - Core: models, protocols, the delivery engine (Foundation only)
        .target(name: "IAPCore"),

        // MARK: - Server side
        // The App Store Server API client, reconciliation, the support desk's order lookup, renewal extensions.
        .target(name: "IAPServerAPI", dependencies: ["IAPCore"]),
        // The webhook fulfillment hook: grants and take-backs POSTed, signed, to a backend in any language.
        .target(name: "IAPWebhook", dependencies: ["IAPCore"]),
        // Receipts and verifyReceipt, deprecated by Apple: opt-in, for migrations.
        .target(name: "IAPLegacyReceipts", dependencies: ["IAPCore"]),

        // MARK: - App side (links no C module)
        .target(name: "IAPApp", dependencies: ["IAPCore"]),
        // The StoreKit 2 adapter; its source is inside `#if canImport(StoreKit)`, empty elsewhere.
        // Scripts/typecheck-storekit.sh type-checks it on Linux against the documented StoreKit API.
        .target(name: "IAPStoreKit", dependencies: ["IAPCore", "IAPApp"]),

        // MARK: - Backends
        .systemLibrary(
            name: "CIAPOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(name: "IAPCrypto", dependencies: ["IAPCore", "CIAPOpenSSL"]),
        // CRC-32C with the processor's instructions, for the file store's record checksums (C, no library).
        .target(name: "CIAPCRC32C"),
        .target(name: "IAPStorageFile", dependencies: ["IAPCore", "IAPServerAPI", "CIAPCRC32C"]),
        .systemLibrary(
            name: "CIAPLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "IAPStoragePostgres", dependencies: ["IAPCore", "IAPServerAPI", "CIAPLibPQ"]),
        .target(name: "IAPTransportURLSession", dependencies: ["IAPCore"]),
        // A generic HTTP/1.1 server: routes and async handlers on GNU libmicrohttpd (only its MicroHTTPD/ files
        // import it).
        .systemLibrary(
            name: "CIAPMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .target(name: "IAPHTTPServer", dependencies: ["IAPCore", "CIAPMicroHTTPD"]),

        // MARK: - The purchase server
        // Its routes, authenticators, metrics, readiness, background worker and `PurchaseServer`, which composes them
        // on a ledger site (`iap serve` runs it).
        .target(name: "IAPPurchaseServer", dependencies: ["IAPCore", "IAPServerAPI", "IAPHTTPServer"]),

        // MARK: - Test kit
        // In-memory stores, clocks, fault injection, transports: no C module, builds for iOS.
        .target(name: "IAPInMemory", dependencies: ["IAPCore", "IAPApp", "IAPServerAPI"]),
        // The conformance suites a backend runs against its stores, catalog and run lock: no C module, no doubles.
        .target(name: "IAPConformance", dependencies: ["IAPCore", "IAPServerAPI"]),
        // The simulated App Store and its device, which sign like Apple's; re-exports IAPInMemory, IAPConformance.
        .target(
            name: "IAPTesting",
            dependencies: ["IAPCore", "IAPApp", "IAPServerAPI", "IAPInMemory", "IAPConformance", "IAPCrypto"]
        ),

        // MARK: - Tool and examples
        // What both executables share: argument parsing, usage and --help, output, secret files (not a product).
        .target(name: "IAPCommandLine", dependencies: ["IAPCore"], path: "Sources/Examples/IAPCommandLine"),
        .executableTarget(
            name: "iap",
            dependencies: [
                "IAPCore", "IAPServerAPI", "IAPApp", "IAPCrypto", "IAPStorageFile", "IAPStoragePostgres",
                "IAPTransportURLSession", "IAPInMemory", "IAPTesting", "IAPHTTPServer", "IAPPurchaseServer",
                "IAPWebhook", "IAPCommandLine",
            ],
            path: "Sources/Examples/iap",
            // The example integrators copy: public API only.
            packageAccess: false
        ),
        // The benchmarks: `swift run -c release iap-bench verify|verify-batch|ingest|pipeline|store|serve|analytics|reconcile`.
        .executableTarget(
            name: "iap-bench",
            dependencies: [
                "IAPCore", "IAPCrypto", "IAPStorageFile", "IAPStoragePostgres", "IAPInMemory", "IAPHTTPServer",
                "IAPPurchaseServer", "IAPServerAPI", "IAPTesting",
                "IAPCommandLine",
            ],
            path: "Sources/Examples/iap-bench"
        ),
        // A libFuzzer target over the verifier's input entry, and a replayer of its corpus in a normal build
        // (see Documentation/Fuzzing.md).
        .executableTarget(
            name: "IAPFuzzVerifier",
            dependencies: ["IAPCore", "IAPCrypto", "CIAPFuzzerDriver"],
            path: "Sources/Examples/Fuzz/VerifierFuzzer"
        ),
        .systemLibrary(name: "CIAPFuzzerDriver", path: "Sources/Examples/Fuzz/CIAPFuzzerDriver"),

        // MARK: - Tests
        // What several test targets share: Apple's fixtures and their loader, the throw-away PostgreSQL server.
        .target(
            name: "IAPTestSupport",
            dependencies: ["IAPCore", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPStoragePostgres", "CIAPLibPQ"],
            path: "Tests/IAPTestSupport",
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "IAPCoreTests",
            dependencies: ["IAPCore", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPTestSupport"]
        ),
        .testTarget(
            name: "IAPServerAPITests",
            dependencies: [
                "IAPCore", "IAPServerAPI", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPTestSupport", "IAPStorageFile",
            ]
        ),
        .testTarget(
            name: "IAPWebhookTests",
            dependencies: [
                "IAPCore", "IAPWebhook", "IAPServerAPI", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPTestSupport",
            ]
        ),
        .testTarget(
            name: "IAPLegacyReceiptsTests",
            dependencies: ["IAPCore", "IAPLegacyReceipts", "IAPInMemory", "IAPTestSupport"]
        ),
        .testTarget(
            name: "IAPAppTests",
            dependencies: ["IAPCore", "IAPApp", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPTestSupport"]
        ),
        .testTarget(
            name: "IAPCryptoTests",
            dependencies: ["IAPCore", "IAPCrypto", "IAPTesting", "IAPInMemory"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "IAPStorageFileTests",
            dependencies: [
                "IAPCore", "IAPApp", "IAPServerAPI", "IAPStorageFile", "IAPConformance", "IAPInMemory",
                "IAPTestSupport",
            ]
        ),
        .testTarget(
            name: "IAPStoragePostgresTests",
            dependencies: [
                "IAPCore", "IAPCrypto", "IAPServerAPI", "IAPStoragePostgres", "IAPInMemory", "IAPConformance",
                "IAPTesting", "IAPTestSupport", "CIAPLibPQ",
            ]
        ),
        .testTarget(
            name: "IAPTransportURLSessionTests",
            dependencies: [
                "IAPCore", "IAPServerAPI", "IAPCrypto", "IAPTesting", "IAPTransportURLSession", "IAPTestSupport",
                "IAPWebhook",
            ]
        ),
        .testTarget(
            name: "IAPHTTPServerTests",
            dependencies: ["IAPCore", "IAPHTTPServer", "IAPInMemory", "IAPTransportURLSession", "IAPTestSupport"]
        ),
        .testTarget(
            name: "IAPPurchaseServerTests",
            dependencies: [
                "IAPCore", "IAPHTTPServer", "IAPPurchaseServer", "IAPServerAPI", "IAPCrypto", "IAPInMemory",
                "IAPTesting", "IAPTransportURLSession", "IAPTestSupport", "IAPStorageFile", "IAPApp",
            ]
        ),
        .testTarget(
            name: "IAPInMemoryTests",
            dependencies: ["IAPCore", "IAPApp", "IAPServerAPI", "IAPInMemory", "IAPConformance"]
        ),
        .testTarget(
            name: "IAPTestingTests",
            dependencies: ["IAPCore", "IAPApp", "IAPServerAPI", "IAPCrypto", "IAPInMemory", "IAPTesting"]
        ),
        // A child process the crash tests of transactional fulfillment kill at chosen steps (built with the tests).
        .executableTarget(
            name: "PostgresFulfillmentCrashHelper",
            dependencies: ["IAPCore", "IAPStoragePostgres"],
            path: "Tests/PostgresFulfillmentCrashHelper"
        ),
        .executableTarget(
            name: "SignalStopHelper",
            dependencies: [
                "IAPCore", "IAPCrypto", "IAPHTTPServer", "IAPInMemory", "IAPPurchaseServer", "IAPServerAPI",
                "IAPStorageFile",
                "IAPTesting",
            ],
            path: "Tests/SignalStopHelper"
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "IAPCore", "IAPServerAPI", "IAPApp", "IAPCrypto", "IAPInMemory", "IAPTesting", "IAPTransportURLSession",
                "IAPStorageFile", "IAPStoragePostgres", "IAPTestSupport", "IAPWebhook",
            ]
        ),
    ]
)

for target in package.targets where [.regular, .test, .executable].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
