// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "swift-iap",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "IAPCore", targets: ["IAPCore"]),
        .library(name: "IAPCrypto", targets: ["IAPCrypto"]),
        .library(name: "IAPStorageFile", targets: ["IAPStorageFile"]),
        .library(name: "IAPStoragePostgres", targets: ["IAPStoragePostgres"]),
        .library(name: "IAPTransportURLSession", targets: ["IAPTransportURLSession"]),
        .library(name: "IAPStoreKit", targets: ["IAPStoreKit"]),
        .library(name: "IAPTesting", targets: ["IAPTesting"]),
        .executable(name: "iap", targets: ["iap"]),
    ],
    targets: [
        // MARK: - Core
        .target(name: "IAPCore"),

        // MARK: - Backends
        .systemLibrary(
            name: "CIAPOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(
            name: "IAPCrypto",
            dependencies: ["IAPCore", "CIAPOpenSSL"]
        ),
        .target(name: "IAPStorageFile", dependencies: ["IAPCore"]),
        .systemLibrary(
            name: "CIAPLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "IAPStoragePostgres", dependencies: ["IAPCore", "CIAPLibPQ"]),
        .target(name: "IAPTransportURLSession", dependencies: ["IAPCore"]),
        // StoreKit 2 adapter for apps; its source is inside `#if canImport(StoreKit)`, empty elsewhere.
        .target(name: "IAPStoreKit", dependencies: ["IAPCore"]),

        // MARK: - Test support
        .target(name: "IAPTesting", dependencies: ["IAPCore", "IAPCrypto"]),

        // MARK: - Tool and examples
        .executableTarget(
            name: "iap",
            dependencies: [
                "IAPCore", "IAPCrypto", "IAPStorageFile", "IAPStoragePostgres", "IAPTransportURLSession", "IAPTesting",
            ],
            path: "Sources/Examples/iap"
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
        .testTarget(name: "IAPCoreTests", dependencies: ["IAPCore", "IAPTesting"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "IAPCryptoTests",
            dependencies: ["IAPCore", "IAPCrypto", "IAPTesting"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "IAPStorageFileTests", dependencies: ["IAPCore", "IAPStorageFile", "IAPTesting"]),
        .testTarget(
            name: "IAPStoragePostgresTests",
            dependencies: ["IAPCore", "IAPCrypto", "IAPStoragePostgres", "IAPTesting", "CIAPLibPQ"]
        ),
        .testTarget(
            name: "IAPTransportURLSessionTests",
            dependencies: ["IAPCore", "IAPTransportURLSession", "IAPTesting"]
        ),
        .testTarget(name: "IAPTestingTests", dependencies: ["IAPCore", "IAPCrypto", "IAPTesting"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["IAPCore", "IAPCrypto", "IAPTesting", "IAPTransportURLSession", "IAPStorageFile"]
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
