#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A ``Transport`` that plays a script of expected requests and canned answers, for unit tests.
///
/// Each call to ``expect(method:path:query:headers:body:)`` queues one expected exchange; the
/// ``Exchange/respond(status:headers:body:)`` or ``Exchange/fail(with:)`` of the returned handle says how to
/// answer it. ``send(_:)`` takes the next exchange in order, checks the request against it (method, percent-encoded
/// path, query pairs in order, the expected headers, the body) and answers. A request that does not match, or that
/// arrives when the script is used up, throws an ``IAPError`` with code `invalidArgument` that says what differed;
/// ``verify()`` throws when an expectation was not met or a mismatch happened. Every request is kept in
/// ``requests``.
///
/// ```swift
/// let transport = ScriptedTransport()
/// transport.expect(method: "GET", path: "/inApps/v1/transactions/1234")
///     .respond(status: 200, body: #"{"signedTransactionInfo":"..."}"#)
/// // ... run the code under test ...
/// try transport.verify()
/// ```
public final class ScriptedTransport: Transport {
    /// What a request body must be.
    public enum ExpectedBody: Sendable, Hashable {
        /// No body, or an empty one.
        case empty
        /// Exactly these bytes.
        case bytes(Data)
        /// A JSON document equal to this one, whatever the key order and spacing.
        case json(String)
    }

    /// How an expected exchange is answered.
    enum Reply: Sendable {
        case unset
        case response(HTTPResponse)
        case failure(IAPError)
    }

    struct Expectation: Sendable {
        var method: String
        var path: String
        var query: [QueryItem]?
        var headers: [String: String]
        var body: ExpectedBody?
        var reply: Reply = .unset
    }

    /// One query pair of a request, percent-decoded.
    public struct QueryItem: Sendable, Hashable, CustomStringConvertible {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }

        public var description: String { "\(name)=\(value)" }
    }

    struct State: Sendable {
        var expectations: [Expectation] = []
        var next = 0
        var requests: [HTTPRequest] = []
        var mismatches: [String] = []
    }

    private let state = LockedValue(State())

    /// Creates a transport with an empty script.
    public init() {}

    /// Queues an expected request.
    ///
    /// - Parameters:
    ///   - method: The HTTP method, such as `GET`.
    ///   - path: The percent-encoded path, such as `/inApps/v1/transactions/1234`.
    ///   - query: The query pairs, decoded, in order; `nil` to accept any query, `[]` to require none.
    ///   - headers: Headers the request must carry with these values (names compared case-insensitively);
    ///     other headers are allowed.
    ///   - body: What the body must be; `nil` to accept any.
    /// - Returns: A handle to script the answer with.
    @discardableResult
    public func expect(
        method: String,
        path: String,
        query: [(String, String)]? = nil,
        headers: [String: String] = [:],
        body: ExpectedBody? = nil
    ) -> Exchange {
        let expectation = Expectation(
            method: method,
            path: path,
            query: query?.map { QueryItem($0.0, $0.1) },
            headers: headers,
            body: body
        )
        let index = state.withLock { state in
            state.expectations.append(expectation)
            return state.expectations.count - 1
        }
        return Exchange(transport: self, index: index)
    }

    /// Every request received so far, in order.
    public var requests: [HTTPRequest] {
        state.withLock { $0.requests }
    }

    /// Expectations queued but not yet used.
    public var pendingCount: Int {
        state.withLock { $0.expectations.count - $0.next }
    }

    /// Throws when an expected request did not arrive or a request did not match.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` listing every problem.
    public func verify() throws {
        let problems = state.withLock { state in
            var problems = state.mismatches
            for expectation in state.expectations[state.next...] {
                problems.append("expected \(expectation.method) \(expectation.path) but it was never sent")
            }
            return problems
        }
        guard problems.isEmpty else {
            throw IAPError(.invalidArgument, "ScriptedTransport: " + problems.joined(separator: "; "))
        }
    }

    /// Checks the request against the next expectation and answers it.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (number, expectation) = state.withLock { state -> (Int, Expectation?) in
            state.requests.append(request)
            guard state.next < state.expectations.count else {
                return (state.requests.count, nil)
            }
            defer { state.next += 1 }
            return (state.requests.count, state.expectations[state.next])
        }
        let described = "request \(number) (\(request.method) \(request.url.absoluteString))"
        guard let expectation else {
            try fail("\(described) was not expected: the script is used up")
        }
        let differences = Self.differences(request, expectation)
        guard differences.isEmpty else {
            try fail("\(described): " + differences.joined(separator: ", "))
        }
        switch expectation.reply {
        case .unset:
            try fail("\(described) matched, but the script gives no answer for it")
        case .response(let response):
            return response
        case .failure(let error):
            throw error
        }
    }

    private func fail(_ message: String) throws -> Never {
        state.withLock { $0.mismatches.append(message) }
        throw IAPError(.invalidArgument, "ScriptedTransport: \(message)")
    }

    func setReply(_ reply: Reply, at index: Int) {
        state.withLock { $0.expectations[index].reply = reply }
    }

    private static func differences(_ request: HTTPRequest, _ expected: Expectation) -> [String] {
        var differences: [String] = []
        if request.method != expected.method {
            differences.append("method \(request.method), expected \(expected.method)")
        }
        let path = request.url.path(percentEncoded: true)
        if path != expected.path {
            differences.append("path \(path), expected \(expected.path)")
        }
        if let query = expected.query {
            let actual = queryItems(of: request.url)
            if actual != query {
                differences.append("query \(describe(actual)), expected \(describe(query))")
            }
        }
        let lowered = Dictionary(
            request.headers.map { ($0.key.lowercased(), $0.value) },
            uniquingKeysWith: { _, last in last }
        )
        for (name, value) in expected.headers.sorted(by: { $0.key < $1.key }) {
            let actual = lowered[name.lowercased()]
            if actual != value {
                differences.append("header \(name): \(actual ?? "<missing>"), expected \(value)")
            }
        }
        if let body = expected.body, let problem = bodyDifference(request.body, body) {
            differences.append(problem)
        }
        return differences
    }

    private static func bodyDifference(_ actual: Data?, _ expected: ExpectedBody) -> String? {
        let bytes = actual ?? Data()
        let text = String(decoding: bytes, as: UTF8.self)
        switch expected {
        case .empty:
            return bytes.isEmpty ? nil : "body \(text), expected none"
        case .bytes(let data):
            return bytes == data ? nil : "body \(text), expected \(String(decoding: data, as: UTF8.self))"
        case .json(let json):
            let decoder = JSONDecoder()
            guard let expectedValue = try? decoder.decode(JSONValue.self, from: Data(json.utf8)) else {
                return "the expected body is not JSON: \(json)"
            }
            guard let actualValue = try? decoder.decode(JSONValue.self, from: bytes) else {
                return "body \(text) is not JSON, expected \(json)"
            }
            return actualValue == expectedValue ? nil : "body \(text), expected \(json)"
        }
    }

    /// The query pairs of a URL, percent-decoded, in order.
    static func queryItems(of url: URL) -> [QueryItem] {
        guard let query = url.query(percentEncoded: true), !query.isEmpty else {
            return []
        }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecode(parts[0])
            let value = parts.count > 1 ? percentDecode(parts[1]) : ""
            return QueryItem(name, value)
        }
    }

    private static func describe(_ items: [QueryItem]) -> String {
        items.isEmpty ? "<none>" : items.map(\.description).joined(separator: "&")
    }

    private static func percentDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension ScriptedTransport {
    /// The handle of one expected exchange, to script its answer.
    public struct Exchange: Sendable {
        let transport: ScriptedTransport
        let index: Int

        /// Answers the request with a response.
        ///
        /// - Parameters:
        ///   - status: The HTTP status.
        ///   - headers: The response headers.
        ///   - body: The body text, usually JSON.
        public func respond(status: Int, headers: [String: String] = [:], body: String = "") {
            respond(status: status, headers: headers, data: Data(body.utf8))
        }

        /// Answers the request with a response whose body is raw bytes.
        ///
        /// - Parameters:
        ///   - status: The HTTP status.
        ///   - headers: The response headers.
        ///   - data: The body.
        public func respond(status: Int, headers: [String: String] = [:], data: Data) {
            transport.setReply(.response(HTTPResponse(status: status, headers: headers, body: data)), at: index)
        }

        /// Answers the request by throwing, as a transport does for a timeout or a refused connection.
        ///
        /// - Parameter error: The error to throw.
        public func fail(with error: IAPError) {
            transport.setReply(.failure(error), at: index)
        }
    }
}
