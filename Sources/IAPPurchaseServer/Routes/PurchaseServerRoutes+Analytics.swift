#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension PurchaseServerRoutes {
    /// `GET /iap/v1/analytics?from=DATE&to=DATE[&interval=day|week|month][&environment=NAME][&product=ID]
    /// [&bundleId=ID]`: the ``AnalyticsReport`` of the ledger, as `iap ledger analytics --json` prints it; on a server
    /// of several apps, of the app named (``app(of:)``), by its own catalog.
    @Sendable
    func analytics(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        let query: AnalyticsQuery
        do {
            query = try AnalyticsQuery(
                from: request.queryValue("from"),
                to: request.queryValue("to"),
                interval: request.queryValue("interval"),
                environment: request.queryValue("environment"),
                productId: request.queryValue("product")
            )
        } catch {
            return Self.failure(400, .invalidArgument, error.message)
        }
        let bundleId: String?
        switch app(of: request) {
        case .success(let named): bundleId = named
        case .failure(let refusal): return refusal.response
        }
        guard let ledger else {
            return Self.failure(501, .unsupportedOperation, "this server's ledger cannot be read whole for analytics")
        }
        do {
            let products = bundleId.map { catalog.products(ofApp: $0) } ?? catalog
            let analytics = LedgerAnalytics(catalog: try await products.snapshot(), proratedRefunds: proratedRefunds)
            let report = try await analytics.report(
                of: ledger,
                from: query.from,
                to: query.to,
                interval: query.interval,
                environment: query.environment,
                productId: query.productId,
                bundleId: bundleId,
                now: clock.now
            )
            return .json(try Self.analyticsEncoder.encode(report))
        } catch let error as IAPError where error.code == .invalidArgument {
            return Self.failure(400, .invalidArgument, error.message)
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }

    static var analyticsEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
