#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension PurchaseServerRoutes {
    /// The bundle ids of the apps served when the pipeline serves several (its catalog is an ``AppRoutingCatalog``),
    /// sorted; empty for a server of one app.
    var servedApps: [String] {
        pipeline.catalog.servedBundleIds
    }

    /// The app a read names with `?bundleId=`, or the answer refusing it.
    ///
    /// On a server of several apps the app is one of them, and must be named unless there is only one. On a server of
    /// one app it may be left out (every purchase counts, as before apps were named); named, only its purchases count.
    ///
    /// - Returns: The bundle id to read (`nil`: every purchase, one app's catalog), or a `400` to answer.
    func app(of request: HTTPServerRequest) -> Result<String?, AppRefusal> {
        let named = request.queryValue("bundleId")
        let apps = servedApps
        if let named {
            guard (1...255).contains(named.utf8.count), !named.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
                return .failure(AppRefusal(Self.failure(400, .invalidArgument, "bundleId is not a bundle id")))
            }
            guard apps.isEmpty || apps.contains(named) else {
                return .failure(
                    AppRefusal(
                        Self.failure(
                            400,
                            .invalidArgument,
                            "this server does not serve that bundleId; it serves \(apps.joined(separator: ", "))"
                        )
                    )
                )
            }
            return .success(named)
        }
        switch apps.count {
        case 0: return .success(nil)
        case 1: return .success(apps[0])
        default:
            return .failure(
                AppRefusal(
                    Self.failure(
                        400,
                        .invalidArgument,
                        "this server serves several apps: name one with ?bundleId= (\(apps.joined(separator: ", ")))"
                    )
                )
            )
        }
    }

    /// The bundle id the signed data of a request's body names (its `signedTransaction` or `signedPayload`), read without verifying it, for the `app` label of the metrics: `nil` on a server of one app
    /// (nothing is read), and the metrics count an app not served as `unknown`.
    func metricApp(ofBody body: Data, field: SignedField) -> String? {
        guard !metrics.apps.isEmpty, let named = try? JSONDecoder().decode(SignedBody.self, from: body),
            let signed = field == .transaction ? named.signedTransaction : named.signedPayload
        else { return nil }
        return AppRoutingVerifier.bundleId(ofUnverified: signed)
    }

    /// Which signed field of a body names the app.
    enum SignedField {
        case transaction, notification
    }

    private struct SignedBody: Decodable {
        var signedTransaction: String?
        var signedPayload: String?
    }

    /// A refused `?bundleId=`: the answer to send.
    struct AppRefusal: Error {
        let response: HTTPServerResponse

        init(_ response: HTTPServerResponse) {
            self.response = response
        }
    }
}
