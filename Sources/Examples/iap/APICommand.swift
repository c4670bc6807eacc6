import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI

/// `iap api`: calls the App Store Server API (Apple's, or a local emulator with `--api-url`) and prints the JSON
/// it answers.
enum APICommand {
    /// What every subcommand prints.
    static let answers = """
        Prints the answer's JSON, with Apple's field names (dates in milliseconds), as the App Store sent it.
        history, refunds and notification-history follow every page and print
        {"signedTransactions":[...],"revision":...,"pages":N} (notification-history:
        {"notificationHistory":[...],"paginationToken":...,"pages":N}), with one progress line per page on
        standard error. --decode verifies each signed field with AppStoreSignedDataVerifier (Apple's root, or
        --root for an emulator) and adds its payload next to it as <field>Decoded.

        Exit status: 0 success, 1 the App Store (or the network, or verification) failed, 2 usage error.
        """

    static let spec = CommandSpec(
        name: "api",
        summary: "call the App Store Server API: transaction, history, statuses, refunds, lookup-order, ...",
        synopsis: [
            "<command> [arguments] --issuer-id ID --key-id ID --auth-key FILE.p8 --bundle-id ID",
            "  --environment Production|Sandbox|LocalTesting [--api-url URL]",
            "  [--decode [--root FILE.der]... [--app-apple-id N]]",
        ],
        discussion: """
            Calls the App Store Server API (Apple's, or a local 'iap emulate' with --api-url; --base-url is an
            alias) with a token signed by the API key, and prints the JSON it answers.

            """ + "\n" + answers,
        subcommands: APIRequest.specs,
        examples: [
            "iap api transaction 2000000000000001 --issuer-id ISSUER --key-id KEY --auth-key key.p8 "
                + "--bundle-id com.example.app --environment Sandbox --decode"
        ]
    )

    static func run(_ arguments: [String]) async -> Never {
        let (command, rest) = spec.subcommand(arguments)
        let parsed = command.parse(rest)
        let request: APIRequest
        let session: APISession
        do {
            request = try APIRequest(command.word, parsed)
            session = try APISession(parsed)
        } catch {
            command.fail(error)
        }
        do {
            let document = try await perform(request, session)
            Output.write(document)
            Output.write("\n")
            terminate(.success)
        } catch let error as IAPError {
            report(error)
        } catch {
            report(IAPError.wrapping(error, as: .internalError, "unexpected failure"))
        }
    }

    /// Prints `error: <code>: <message>` with Apple's code and the HTTP status, and exits with 1.
    private static func report(_ error: IAPError) -> Never {
        var line = "error: \(error.code.rawValue): \(error.message)"
        if let status = error.httpStatus {
            line += " (HTTP \(status))"
        }
        if error.isRetryable {
            line += " [retryable]"
        }
        Output.error(line)
        terminate(.rejected)
    }

    /// Makes the call and returns the JSON to print.
    static func perform(_ request: APIRequest, _ session: APISession) async throws -> Data {
        let client = session.client
        switch request {
        case .transaction(let id):
            _ = try await client.transactionInfo(transactionId: id)
        case .statuses(let id, let status):
            _ = try await client.allSubscriptionStatuses(anyTransactionId: id, status: status)
        case .lookUpOrder(let orderId):
            _ = try await client.lookUpOrderId(orderId)
        case .requestTestNotification:
            _ = try await client.requestTestNotification()
        case .testNotificationStatus(let token):
            _ = try await client.testNotificationStatus(testNotificationToken: token)
        case .extend(let id, let body):
            _ = try await client.extendSubscriptionRenewalDate(originalTransactionId: id, body)
        case .history(let id, let filters, let revision):
            let pages = client.transactionHistory(anyTransactionId: id, request: filters, revision: revision)
            let count = try await follow(pages, noun: "transaction", resume: "--revision", pages.lastRevision) {
                $0.signedTransactions?.count ?? 0
            }
            return try merged(session, list: "signedTransactions", token: "revision", pages.lastRevision, count)
        case .refunds(let id, let revision):
            let pages = client.refundHistory(anyTransactionId: id, revision: revision)
            let count = try await follow(pages, noun: "transaction", resume: "--revision", pages.lastRevision) {
                $0.signedTransactions?.count ?? 0
            }
            return try merged(session, list: "signedTransactions", token: "revision", pages.lastRevision, count)
        case .notificationHistory(let body, let paginationToken):
            let pages = client.notificationHistory(body, paginationToken: paginationToken)
            let count = try await follow(
                pages,
                noun: "notification",
                resume: "--pagination-token",
                pages.lastPaginationToken
            ) {
                $0.notificationHistory?.count ?? 0
            }
            return try merged(
                session,
                list: "notificationHistory",
                token: "paginationToken",
                pages.lastPaginationToken,
                count
            )
        }
        guard let body = session.recorder.successfulBodies.last else {
            throw IAPError(.internalError, "the answer was not recorded")
        }
        guard let verifier = session.verifier else {
            return body
        }
        return try serialize(try SignedFieldDecoder(verifier: verifier).decode(try parse(body)))
    }

    /// Iterates every page, printing a progress line for each, and returns how many there were.
    private static func follow<Pages: AsyncSequence>(
        _ pages: Pages,
        noun: String,
        resume option: String,
        _ last: @autoclosure () -> String?,
        items: (Pages.Element) -> Int
    ) async throws -> Int {
        var count = 0
        do {
            for try await page in pages {
                count += 1
                let items = items(page)
                Output.error("page \(count): \(items) \(noun)\(items == 1 ? "" : "s")")
            }
        } catch var error as IAPError {
            if count > 0, let token = last() {
                error.message += " (after \(count) pages; resume with \(option) \(token))"
            }
            throw error
        }
        return count
    }

    /// The pages' lists joined, as `{"<list>":[...],"<token>":"...","pages":N}`, from the answers as recorded.
    private static func merged(
        _ session: APISession,
        list: String,
        token name: String,
        _ token: String?,
        _ pages: Int
    ) throws -> Data {
        var items: [Any] = []
        for body in session.recorder.successfulBodies {
            guard let page = try parse(body) as? [String: Any] else {
                throw IAPError(.decodingFailure, "a page is not a JSON object")
            }
            items += page[list] as? [Any] ?? []
        }
        var fields: [(String, Any)] = [(list, items)]
        if let verifier = session.verifier {
            let decoded = try SignedFieldDecoder(verifier: verifier).decode([list: items])
            if let decoded = decoded as? [String: Any] {
                for (key, value) in decoded.sorted(by: { $0.key < $1.key }) where key != list {
                    fields.append((key, value))
                }
                fields[0] = (list, decoded[list] ?? items)
            }
        }
        fields.append((name, token ?? NSNull()))
        fields.append(("pages", pages))
        var text = "{"
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 {
                text += ","
            }
            text += String(decoding: try serialize(key), as: UTF8.self) + ":"
            text += String(decoding: try serialize(value), as: UTF8.self)
        }
        return Data((text + "}").utf8)
    }

    private static func parse(_ body: Data) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        } catch {
            throw IAPError(.decodingFailure, "the answer is not JSON: \(error.localizedDescription)")
        }
    }

    private static func serialize(_ value: Any) throws -> Data {
        try JSONSerialization.data(
            withJSONObject: value,
            options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
        )
    }
}
