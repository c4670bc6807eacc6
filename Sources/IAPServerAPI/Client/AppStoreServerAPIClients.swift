public import IAPCore

/// One App Store Server API client per environment: Production and Sandbox data are answered by the environment
/// that signed them (an App Review purchase on a production server is a Sandbox transaction, and only the Sandbox
/// API knows it).
///
/// ```swift
/// let clients = try AppStoreServerAPIClients([production, sandbox])
/// let client = try clients.client(for: transaction.environment)
/// ```
public struct AppStoreServerAPIClients: Sendable {
    private let byEnvironment: [AppStoreEnvironment: AppStoreServerAPIClient]

    /// The clients, in the order given.
    public let all: [AppStoreServerAPIClient]

    /// Creates a set of clients.
    ///
    /// - Parameter clients: At most one client per environment.
    /// - Throws: ``IAPError`` `invalidConfiguration` for an empty list or two clients of one environment.
    public init(_ clients: [AppStoreServerAPIClient]) throws {
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
        self.byEnvironment = byEnvironment
        self.all = clients
    }

    /// A set of one client.
    ///
    /// - Parameter client: The client.
    public init(_ client: AppStoreServerAPIClient) {
        byEnvironment = [client.environment: client]
        all = [client]
    }

    /// The environments there is a client for.
    public var environments: Set<AppStoreEnvironment> { Set(byEnvironment.keys) }

    /// The client of an environment.
    ///
    /// - Parameter environment: The environment of the data to ask about; `nil` (data that does not say) means the
    ///   first client given.
    /// - Returns: The client.
    /// - Throws: ``IAPError`` `environmentMismatch` when no client serves that environment.
    public func client(for environment: AppStoreEnvironment?) throws -> AppStoreServerAPIClient {
        guard let environment else { return all[0] }
        guard let client = byEnvironment[environment] else {
            throw IAPError(
                .environmentMismatch,
                "no App Store Server API client for \(environment.rawValue) data (there are clients for "
                    + all.map(\.environment.rawValue).joined(separator: ", ") + ")"
            )
        }
        return client
    }
}
