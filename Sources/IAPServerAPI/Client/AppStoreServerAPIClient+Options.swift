#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

extension AppStoreServerAPIClient {
    /// How an ``AppStoreServerAPIClient`` times out, retries and falls back.
    ///
    /// A request is retried only when a retry can help (an HTTP 5xx, a 429, one of Apple's retryable error
    /// codes, a timeout or a transport failure) and only when it is safe to send twice: GET requests, the
    /// notification history query, and the PUT requests Apple makes idempotent (extend one renewal date,
    /// consumption information, appAccountToken). Mass extension, test notifications and finishing a
    /// transaction are retried only with ``retriesNonIdempotentRequests``.
    public struct Options: Sendable, Hashable {
        /// How many times a request is sent at most, the first time included; 1 disables retries.
        public var maximumAttempts: Int
        /// The wait before the second attempt; each further wait doubles it.
        public var initialBackoff: Duration
        /// The longest wait between two attempts, jitter included.
        public var maximumBackoff: Duration
        /// The spread of each wait, as a fraction from 0 to 1: 0.25 draws it from 75 % to 125 % of the nominal
        /// wait.
        public var jitter: Double
        /// The longest a call may take, waits and attempts together, before it gives up retrying. A
        /// `Retry-After` that ends later makes the call throw at once, with ``IAPError/retryAfter`` set.
        public var retryBudget: Duration
        /// How long one HTTP exchange may take (``HTTPRequest/timeout``).
        public var requestTimeout: Duration
        /// The largest response body accepted, in bytes; a larger one fails with `decodingFailure`.
        public var maximumResponseSize: Int
        /// Whether requests that are not idempotent are retried too.
        public var retriesNonIdempotentRequests: Bool
        /// Whether a lookup that Production answers with `TransactionIdNotFound` (4040010) or
        /// `OriginalTransactionIdNotFound` (4040005) is sent again to Sandbox. Only for a Production client.
        ///
        /// It applies to transaction info, transaction history, subscription statuses, refund history and app
        /// transaction info. A paged sequence stays in the environment that answered its first page.
        public var fallsBackToSandbox: Bool
        /// The Sandbox base URL the fallback uses; Apple's when `nil`.
        public var sandboxFallbackBaseURL: URL?

        /// Creates options.
        public init(
            maximumAttempts: Int = 4,
            initialBackoff: Duration = .milliseconds(500),
            maximumBackoff: Duration = .seconds(10),
            jitter: Double = 0.25,
            retryBudget: Duration = .seconds(60),
            requestTimeout: Duration = .seconds(30),
            maximumResponseSize: Int = 4 * 1024 * 1024,
            retriesNonIdempotentRequests: Bool = false,
            fallsBackToSandbox: Bool = false,
            sandboxFallbackBaseURL: URL? = nil
        ) {
            self.maximumAttempts = maximumAttempts
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.jitter = jitter
            self.retryBudget = retryBudget
            self.requestTimeout = requestTimeout
            self.maximumResponseSize = maximumResponseSize
            self.retriesNonIdempotentRequests = retriesNonIdempotentRequests
            self.fallsBackToSandbox = fallsBackToSandbox
            self.sandboxFallbackBaseURL = sandboxFallbackBaseURL
        }

        /// The backoff between attempts, as the ``RetryPolicy`` that computes it: doubling from ``initialBackoff``
        /// up to ``maximumBackoff``, spread by ``jitter``.
        var backoff: RetryPolicy {
            RetryPolicy(
                initialDelay: initialBackoff,
                multiplier: 2,
                maximumDelay: maximumBackoff,
                maximumAttempts: maximumAttempts,
                jitter: jitter
            )
        }

        /// Throws when a value is out of range.
        func validate() throws {
            guard maximumAttempts >= 1 else {
                throw IAPError(.invalidConfiguration, "maximumAttempts must be at least 1")
            }
            guard initialBackoff >= .zero, maximumBackoff >= initialBackoff else {
                throw IAPError(.invalidConfiguration, "the backoff must satisfy 0 <= initialBackoff <= maximumBackoff")
            }
            guard jitter >= 0, jitter <= 1 else {
                throw IAPError(.invalidConfiguration, "jitter must be between 0 and 1")
            }
            guard retryBudget >= .zero, requestTimeout > .zero else {
                throw IAPError(.invalidConfiguration, "the retry budget and the request timeout must be positive")
            }
            guard maximumResponseSize > 0 else {
                throw IAPError(.invalidConfiguration, "maximumResponseSize must be positive")
            }
        }
    }
}
