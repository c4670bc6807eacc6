import Foundation
import IAPCommandLine
import IAPCore

/// `iap decode`: prints a JWS's header and payload without verifying anything.
enum DecodeCommand {
    static let spec = CommandSpec(
        name: "decode",
        summary: "print a JWS's header and payload WITHOUT verifying it",
        synopsis: ["[FILE|-]"],
        discussion: """
            Prints the header and payload of a compact JWS (from FILE or standard input) as JSON, WITHOUT
            verifying the signature or the certificate chain. The output is marked "unverified": never act on it;
            'iap verify' is the command that checks.

            Exit status: 0 decoded, 1 not a compact JWS, 2 usage error.
            """,
        examples: ["iap decode notification.jws"]
    )

    static func run(_ arguments: [String]) -> Never {
        let parsed = spec.parse(arguments)
        let data: Data
        do {
            data = try Input.read(try parsed.singlePositional())
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch let error as Input.ReadError {
            Output.error("error: \(error.message)")
            terminate(.usage)
        } catch {
            Output.error("error: \(error)")
            terminate(.usage)
        }

        let token = Input.token(from: data)
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            Output.error(
                "error: \(IAPError.Code.malformedSignedData.rawValue): a compact JWS has three segments, found \(segments.count)"
            )
            terminate(.rejected)
        }
        guard let header = jsonObject(segments[0]), let payload = jsonObject(segments[1]) else {
            Output.error(
                "error: \(IAPError.Code.malformedSignedData.rawValue): the header or payload is not base64url-encoded JSON"
            )
            terminate(.rejected)
        }
        let document: [String: Any] = ["unverified": true, "header": header, "payload": payload]
        do {
            let output = try JSONSerialization.data(
                withJSONObject: document,
                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            )
            Output.write(output)
            Output.write("\n")
        } catch {
            Output.error("error: \(IAPError.Code.internalError.rawValue): \(error)")
            terminate(.rejected)
        }
        Output.error("warning: decoded WITHOUT verification; do not trust these values")
        terminate(.success)
    }

    private static func jsonObject(_ segment: Substring) -> Any? {
        guard let bytes = Base64.decodeURL(segment) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }
}
