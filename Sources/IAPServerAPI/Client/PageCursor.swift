import IAPCore

/// The last paging token a sequence has seen, shared by the sequence and its iterators.
final class PageProgress: Sendable {
    private let token: LockedValue<String?>

    init(_ initial: String?) {
        self.token = LockedValue(initial)
    }

    var value: String? {
        token.withLock { $0 }
    }

    func record(_ value: String) {
        token.withLock { $0 = value }
    }
}

/// Walks the pages of a paged App Store Server API endpoint.
///
/// Each fetch receives the token of the previous page (`nil` first) and the target that answered the first
/// page, so every page after the first goes to the same environment.
struct PageCursor<Page: Sendable>: Sendable {
    typealias Target = AppStoreServerAPIClient.Target
    typealias Fetch = @Sendable (_ token: String?, _ target: Target?) async throws -> (response: Page, target: Target)

    private let fetch: Fetch
    private let nextToken: @Sendable (Page) -> String?
    private let hasMore: @Sendable (Page) -> Bool
    private let progress: PageProgress
    private let what: String
    private var token: String?
    /// Every token followed so far: a page pointing back at one would loop forever.
    private var seenTokens: Set<String> = []
    private var target: Target?
    private var finished = false
    private var pendingError: IAPError?

    init(
        what: String,
        startToken: String?,
        progress: PageProgress,
        fetch: @escaping Fetch,
        nextToken: @escaping @Sendable (Page) -> String?,
        hasMore: @escaping @Sendable (Page) -> Bool
    ) {
        self.what = what
        self.token = startToken
        self.progress = progress
        self.fetch = fetch
        self.nextToken = nextToken
        self.hasMore = hasMore
    }

    /// Fetches the next page, or returns `nil` after the last one.
    mutating func next() async throws -> Page? {
        if let pendingError {
            self.pendingError = nil
            finished = true
            throw pendingError
        }
        guard !finished else {
            return nil
        }
        let page: Page
        do {
            let answer = try await fetch(token, target)
            page = answer.response
            target = answer.target
        } catch {
            finished = true
            throw error
        }
        let next = nextToken(page)
        if let next {
            progress.record(next)
        }
        if hasMore(page) {
            if let next, next != token, !seenTokens.contains(next) {
                if let token {
                    seenTokens.insert(token)
                }
                token = next
            } else {
                // Following a token seen before would loop forever.
                pendingError = IAPError(
                    .decodingFailure,
                    "the App Store answered a \(what) page with more to come but no new token"
                )
            }
        } else {
            finished = true
        }
        return page
    }
}
