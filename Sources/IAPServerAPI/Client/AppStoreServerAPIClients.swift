public import IAPCore

/// One App Store Server API client per environment: Production and Sandbox data are answered by the environment
/// that signed them (an App Review purchase on a production server is a Sandbox transaction, and only the Sandbox
/// API knows it).
///
/// ```swift
/// let clients = try AppStoreServerAPIClients([production, sandbox])
/// let client = try clients.client(for: transaction.environment)
/// ```
///
/// A server of several apps has clients per app as well (``init(apps:)``): one API key serves every app of a team,
/// and each app's clients carry its bundle id in their tokens. Each purchase is then asked of its own app's client
/// (``client(for:bundleId:)``).
public struct AppStoreServerAPIClients: Sendable {
    private let byEnvironment: [AppStoreEnvironment: AppStoreServerAPIClient]
    private let byApp: [String: [AppStoreEnvironment: AppStoreServerAPIClient]]
    /// The clients, in the order given (app by app, in bundle id order, for clients of several apps).
    public let all: [AppStoreServerAPIClient]
    /// The bundle ids of the apps, sorted; empty for the clients of one app that does not name itself.
    public let bundleIds: [String]

    /// Creates a set of clients.
    ///
    /// - Parameter clients: At most one client per environment.
    /// - Throws: ``IAPError`` `invalidConfiguration` for an empty list or two clients of one environment.
    public init(_ clients: [AppStoreServerAPIClient]) throws {
        self.byEnvironment = try Self.byEnvironment(clients)
        self.byApp = [:]
        self.all = clients
        self.bundleIds = []
    }

    /// A set of one client.
    ///
    /// - Parameter client: The client.
    public init(_ client: AppStoreServerAPIClient) {
        byEnvironment = [client.environment: client]
        byApp = [:]
        all = [client]
        bundleIds = []
    }

    /// The clients of several apps: each app's clients, at most one per environment, under its bundle id.
    ///
    /// - Parameter apps: The clients of each app, by bundle id (each app's token provider names that bundle id).
    /// - Throws: ``IAPError`` `invalidConfiguration` for no app, an app without clients, or two clients of one
    ///   environment in one app.
    public init(apps: [String: [AppStoreServerAPIClient]]) throws {
        guard !apps.isEmpty else {
            throw IAPError(.invalidConfiguration, "the App Store Server API clients of several apps need an app")
        }
        var byApp: [String: [AppStoreEnvironment: AppStoreServerAPIClient]] = [:]
        var all: [AppStoreServerAPIClient] = []
        let bundleIds = apps.keys.sorted()
        for bundleId in bundleIds {
            let clients = apps[bundleId] ?? []
            do {
                byApp[bundleId] = try Self.byEnvironment(clients)
            } catch {
                throw IAPError(.invalidConfiguration, "\(bundleId): \(error.message)")
            }
            all += clients
        }
        self.byApp = byApp
        self.byEnvironment = byApp[bundleIds[0]] ?? [:]
        self.all = all
        self.bundleIds = bundleIds
    }

    private static func byEnvironment(
        _ clients: [AppStoreServerAPIClient]
    ) throws(IAPError) -> [AppStoreEnvironment: AppStoreServerAPIClient] {
        guard !clients.isEmpty else {
            throw IAPError(.invalidConfiguration, "at least one App Store Server API client is needed")
        }
        var byEnvironment: [AppStoreEnvironment: AppStoreServerAPIClient] = [:]
        for client in clients {
            guard byEnvironment.updateValue(client, forKey: client.environment) == nil else {
                throw IAPError(
                    .invalidConfiguration,
                    "two App Store Server API clients for \(client.environment.rawValue); give one per environment"
                )
            }
        }
        return byEnvironment
    }

    /// The environments there is a client for (of some app).
    public var environments: Set<AppStoreEnvironment> { Set(all.map(\.environment)) }

    /// The clients of one app, or `nil` when these are clients of several apps and that one is not among them. The
    /// clients of one app answer for any bundle id.
    public func clients(ofApp bundleId: String) -> AppStoreServerAPIClients? {
        guard !byApp.isEmpty else { return self }
        guard let clients = byApp[bundleId] else { return nil }
        return try? AppStoreServerAPIClients(
            apps: [bundleId: AppStoreEnvironment.allKnown.compactMap { clients[$0] }]
        )
    }

    /// The client of an environment.
    ///
    /// - Parameter environment: The environment of the data to ask about; `nil` (data that does not say) means the
    ///   first client given.
    /// - Returns: The client (of the first app, for clients of several apps: ask ``client(for:bundleId:)``).
    /// - Throws: ``IAPError`` `environmentMismatch` when no client serves that environment.
    public func client(for environment: AppStoreEnvironment?) throws -> AppStoreServerAPIClient {
        try Self.client(for: environment, in: byEnvironment, fallback: all[0])
    }

    /// The client of an environment, of the app with a bundle id.
    ///
    /// - Parameters:
    ///   - environment: The environment of the data to ask about; `nil` means the app's first client.
    ///   - bundleId: The app of the data; `nil` (data that names none) means the first app. Clients of one app
    ///     answer for any bundle id.
    /// - Returns: The client.
    /// - Throws: ``IAPError`` `bundleIdMismatch` when these are clients of several apps and not of that one;
    ///   `environmentMismatch` when the app has no client of that environment.
    public func client(for environment: AppStoreEnvironment?, bundleId: String?) throws -> AppStoreServerAPIClient {
        guard !byApp.isEmpty, let bundleId else { return try client(for: environment) }
        guard let clients = byApp[bundleId] else {
            throw IAPError(
                .bundleIdMismatch,
                "no App Store Server API client for \(bundleId) (there are clients for "
                    + bundleIds.joined(separator: ", ") + ")"
            )
        }
        let first = AppStoreEnvironment.allKnown.lazy.compactMap { clients[$0] }.first ?? all[0]
        return try Self.client(for: environment, in: clients, fallback: first)
    }

    private static func client(
        for environment: AppStoreEnvironment?,
        in clients: [AppStoreEnvironment: AppStoreServerAPIClient],
        fallback: AppStoreServerAPIClient
    ) throws -> AppStoreServerAPIClient {
        guard let environment else { return fallback }
        guard let client = clients[environment] else {
            throw IAPError(
                .environmentMismatch,
                "no App Store Server API client for \(environment.rawValue) data (there are clients for "
                    + AppStoreEnvironment.allKnown.filter { clients[$0] != nil }.map(\.rawValue)
                    .joined(separator: ", ") + ")"
            )
        }
        return client
    }
}
