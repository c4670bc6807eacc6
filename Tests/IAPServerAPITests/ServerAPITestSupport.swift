import Foundation
import IAPCore
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

/// A token provider that hands out `token-1`, then `token-2` after each invalidation, and counts both.
final class CountingTokenProvider: BearerTokenProvider {
    private let state = LockedValue((generation: 1, invalidations: 0, issued: 0))

    func token() async throws -> String {
        state.withLock { state in
            state.issued += 1
            return "token-\(state.generation)"
        }
    }

    func invalidate() async {
        state.withLock { state in
            state.generation += 1
            state.invalidations += 1
        }
    }

    var invalidations: Int {
        state.withLock { $0.invalidations }
    }
}

/// A client over a scripted transport, a counting token provider and clocks that never really wait.
struct APIHarness {
    static let start = Date(millisecondsSince1970: 1_700_000_000_000)

    let transport = ScriptedTransport()
    let tokens = CountingTokenProvider()
    let wall = ManualClock(now: APIHarness.start)
    let clock: ImmediateClock
    let client: AppStoreServerAPIClient

    init(
        environment: AppStoreEnvironment = .localTesting,
        baseURL: URL? = nil,
        options: AppStoreServerAPIClient.Options = APIHarness.options()
    ) throws {
        clock = ImmediateClock(linkedTo: wall)
        client = try AppStoreServerAPIClient(
            environment: environment,
            baseURL: baseURL,
            transport: transport,
            tokenProvider: tokens,
            options: options,
            clock: clock,
            wallClock: wall
        )
    }

    /// Default options without jitter, so that waits are exact.
    static func options(_ configure: (inout AppStoreServerAPIClient.Options) -> Void = { _ in })
        -> AppStoreServerAPIClient.Options
    {
        var options = AppStoreServerAPIClient.Options(jitter: 0)
        configure(&options)
        return options
    }

    /// The headers every request carries.
    static func standardHeaders(token: String = "token-1") -> [String: String] {
        [
            "Authorization": "Bearer \(token)",
            "Accept": "application/json",
            "User-Agent": AppStoreServerAPIClient.userAgent,
        ]
    }

    /// The standard headers plus `Content-Type: application/json`.
    static func jsonHeaders(token: String = "token-1") -> [String: String] {
        var headers = standardHeaders(token: token)
        headers["Content-Type"] = "application/json"
        return headers
    }
}
