#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The body of a webhook request that forwards an app-level App Store Server Notification (`RESCIND_CONSENT`,
/// `EXTERNAL_PURCHASE_TOKEN`, `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`).
///
/// `type` names the notification: `app.rescindConsent`, `app.externalPurchaseToken`, `app.metadataUpdate`,
/// `app.migration`, `app.priceChange` (`app.` and the type in lower camel case, for types Apple adds later). The
/// body also holds `idempotencyKey` (`notification:<notificationUUID>`), `notificationType`, `subtype`,
/// `notificationUUID`, `signedDate`, `environment`, `bundleId`, `appTransactionId` (from the notification's signed
/// app transaction, for `RESCIND_CONSENT`) and `userIds` (the ledger's owners of that Apple Account's purchases,
/// sorted). A field that is not known is absent; later versions may add fields.
///
/// ```json
/// {"type":"app.rescindConsent","idempotencyKey":"notification:6b0f...","notificationType":"RESCIND_CONSENT",
///  "notificationUUID":"6b0f...","environment":"Production","bundleId":"com.example.app",
///  "appTransactionId":"704289572311371001","userIds":["alice"],"signedDate":1767225600000}
/// ```
public struct WebhookAppNotification: Codable, Sendable, Hashable {
    /// `app.` and the notification type in lower camel case.
    public var type: String
    /// `notification:<notificationUUID>`: the same for every retry of the notification.
    public var idempotencyKey: String
    /// Apple's `notificationType`.
    public var notificationType: String
    /// Apple's `subtype`, if any.
    public var subtype: String?
    /// Apple's `notificationUUID`.
    public var notificationUUID: String
    /// When Apple signed it, in milliseconds since 1970.
    public var signedDate: Int64?
    /// `Production` or `Sandbox`.
    public var environment: String?
    /// The app.
    public var bundleId: String?
    /// The Apple Account's app transaction id, for `RESCIND_CONSENT`.
    public var appTransactionId: String?
    /// The ledger's owners of the Apple Account's purchases, for `RESCIND_CONSENT`.
    public var userIds: [String]?

    /// The webhook `type` of a notification type: `app.` and its raw value in lower camel case.
    public static func type(of notificationType: NotificationType) -> String {
        let words = notificationType.rawValue.lowercased().split(separator: "_")
        let camel = words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
        return "app." + camel
    }
}

/// An ``AppNotificationHandler`` that forwards each app-level notification to the integrator's webhook, signed as
/// ``WebhookFulfillmentHook`` signs grants (`X-IAP-Signature`, `Idempotency-Key`), as a ``WebhookAppNotification``.
///
/// A 2xx or a 409 means received; a 410 or a 422 means the receiver will never take it: the notification is then
/// acknowledged all the same (nothing else would change the answer). Anything else — a 5xx, another 4xx, a timeout —
/// throws, so the App Store sends the notification again (over days, as it retries).
public struct WebhookAppNotificationForwarder: AppNotificationHandler {
    /// Where notifications go.
    public let url: URL
    private let authenticator: any MessageAuthenticator
    private let transport: any Transport
    private let clock: any WallClock
    private let timeout: Duration
    private let ledger: (any EntitlementStore)?

    /// Creates a forwarder.
    ///
    /// - Parameters:
    ///   - url: The receiver's endpoint (the grant webhook's, with `iap serve`).
    ///   - authenticator: HMAC-SHA256 keyed with the shared secret.
    ///   - transport: What sends the requests.
    ///   - clock: The signing time.
    ///   - timeout: How long one request may take.
    ///   - ledger: Where `userIds` of a `RESCIND_CONSENT` are looked up; `nil` sends none.
    public init(
        url: URL,
        authenticator: some MessageAuthenticator,
        transport: some Transport,
        clock: some WallClock = SystemClock(),
        timeout: Duration = .seconds(10),
        ledger: (any EntitlementStore)? = nil
    ) {
        self.url = url
        self.authenticator = authenticator
        self.transport = transport
        self.clock = clock
        self.timeout = timeout
        self.ledger = ledger
    }

    public func handleAppNotification(_ notification: VerifiedNotification) async throws {
        let body = try await body(for: notification)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = try encoder.encode(body)
        let timestamp = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        let signature = WebhookSignature(signing: bytes, at: timestamp, authenticator: authenticator)
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: [
                "Content-Type": "application/json",
                "Idempotency-Key": body.idempotencyKey,
                WebhookSignature.headerName: signature.header,
            ],
            body: bytes,
            timeout: timeout
        )
        let what = "the \(body.type) webhook for notification \(body.notificationUUID)"
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            var failure = IAPError.wrapping(error, as: .fulfillmentFailed, "\(what) could not be sent")
            failure.isRetryable = true
            throw failure
        }
        do {
            try WebhookFulfillmentHook.check(response, what: what)
        } catch let error as IAPError where error.code == .fulfillmentRefused {
            return
        }
    }

    /// The body a notification becomes.
    public func body(for notification: VerifiedNotification) async throws -> WebhookAppNotification {
        let payload = notification.payload
        let type = payload.notificationType ?? NotificationType(rawValue: "UNKNOWN")
        let uuid = payload.notificationUUID ?? ""
        let appTransactionId = notification.appTransaction?.appTransactionId
        var userIds: [String]?
        if let ledger, let appTransactionId {
            let owners = try await ledger.entries(appTransactionId: appTransactionId).compactMap(\.owner)
            userIds = Array(Set(owners)).sorted()
        }
        return WebhookAppNotification(
            type: WebhookAppNotification.type(of: type),
            idempotencyKey: "notification:\(uuid)",
            notificationType: type.rawValue,
            subtype: payload.subtype?.rawValue,
            notificationUUID: uuid,
            signedDate: payload.signedDate?.millisecondsSince1970,
            environment: (payload.appData?.environment ?? payload.data?.environment)?.rawValue,
            bundleId: payload.appData?.bundleId ?? payload.data?.bundleId,
            appTransactionId: appTransactionId,
            userIds: userIds
        )
    }
}
