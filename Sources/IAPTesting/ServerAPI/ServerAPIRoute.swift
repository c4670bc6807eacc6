/// Matches a request's method and path segments against patterns such as `v1/transactions/*/finish`.
public struct ServerAPIRoute {
    /// The request method.
    public let method: String
    /// The path segments after the prefix the caller removed.
    public let segments: [String]

    /// Creates a route of a request.
    public init(method: String, segments: [String]) {
        self.method = method
        self.segments = segments
    }

    /// The values of the `*` segments of the first pattern that matches, or `nil` when none does.
    ///
    /// - Parameter patterns: Pairs of a method and a path pattern of literal segments and `*` wildcards.
    /// - Returns: One value per wildcard, in order.
    public func match(_ patterns: (method: String, path: String)...) -> [String]? {
        for pattern in patterns where pattern.method == method {
            let parts = pattern.path.split(separator: "/").map(String.init)
            guard parts.count == segments.count else { continue }
            var captures: [String] = []
            var matched = true
            for (part, segment) in zip(parts, segments) {
                if part == "*" {
                    captures.append(segment)
                } else if part != segment {
                    matched = false
                    break
                }
            }
            if matched { return captures }
        }
        return nil
    }
}
