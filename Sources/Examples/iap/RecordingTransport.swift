import Foundation
import IAPCore

/// A ``Transport`` that forwards to another and keeps the body of every 2xx answer, so that `iap api` can print
/// the App Store's JSON exactly as it came, fields this version of swift-iap does not model included.
final class RecordingTransport: Transport {
    private let base: any Transport
    private let bodies = LockedValue<[Data]>([])

    init(_ base: any Transport) {
        self.base = base
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await base.send(request)
        if (200...299).contains(response.status) {
            bodies.withLock { $0.append(response.body) }
        }
        return response
    }

    /// The bodies of the 2xx answers so far, in order; one per call or page, since the client stops at the first
    /// 2xx answer of each.
    var successfulBodies: [Data] {
        bodies.withLock { $0 }
    }
}
