/// A route's path: literal segments, `{name}` segments that match any one segment, and an optional last
/// `{name...}` that matches the rest of the path (zero or more segments, joined by `/`).
struct HTTPRoutePattern: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    /// The pattern as written.
    let text: String
    let segments: [Segment]

    /// Parses a pattern such as `/iap/v1/users/{userId}/entitlements`; a segment in braces is a parameter, any
    /// other segment (braces included) is literal, and a `{name...}` anywhere but last is literal too.
    init(_ text: String) {
        self.text = text.hasPrefix("/") ? text : "/" + text
        let parts = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        segments = parts.enumerated().map { index, part in
            guard part.count > 2, part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(part) }
            let name = String(part.dropFirst().dropLast())
            if name.hasSuffix("..."), index == parts.count - 1, name.count > 3 {
                return .rest(String(name.dropLast(3)))
            }
            return name.contains("{") || name.contains("}") ? .literal(part) : .parameter(name)
        }
    }

    /// The parameters when `path` matches, or `nil`.
    ///
    /// - Parameter path: Percent-decoded segments.
    func match(_ path: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                parameters[name] = path.dropFirst(index).joined(separator: "/")
                return parameters
            case .literal(let literal):
                guard index < path.count, path[index] == literal else { return nil }
            case .parameter(let name):
                guard index < path.count else { return nil }
                parameters[name] = path[index]
            }
        }
        return path.count == segments.count ? parameters : nil
    }

    /// How specific the pattern is, segment by segment: a literal beats a parameter, which beats the rest.
    var specificity: [Int] {
        segments.map {
            switch $0 {
            case .literal: 2
            case .parameter: 1
            case .rest: 0
            }
        }
    }

    /// Whether this pattern is more specific than another: compared segment by segment, then the longer wins.
    func isMoreSpecific(than other: HTTPRoutePattern) -> Bool {
        let mine = specificity
        let theirs = other.specificity
        for (left, right) in zip(mine, theirs) where left != right {
            return left > right
        }
        return mine.count > theirs.count
    }
}
