import Foundation
import IAPCore
import IAPCrypto

/// `iap api --decode`: verifies every signed field of an App Store Server API answer and adds its payload next to
/// it, as `<field>Decoded`.
///
/// The signed fields are `signedTransactionInfo` and `signedTransactions` (transactions), `signedRenewalInfo`
/// (renewal info), `signedAppTransactionInfo` (app transaction) and `signedPayload` (notifications), wherever they
/// are in the document. The original strings are kept. One field that fails verification fails the whole
/// command: nothing unverified is printed as decoded.
struct SignedFieldDecoder {
    let verifier: AppStoreSignedDataVerifier

    private static let kinds: [String: SignedDataKind] = [
        "signedTransactionInfo": .transaction,
        "signedTransactions": .transaction,
        "signedRenewalInfo": .renewal,
        "signedAppTransactionInfo": .appTransaction,
        "signedPayload": .notification,
    ]

    /// The document with a decoded payload next to each signed field.
    ///
    /// - Throws: ``IAPError`` from the verifier, naming the field.
    func decode(_ json: Any) throws -> Any {
        if let array = json as? [Any] {
            return try array.map { try decode($0) }
        }
        guard var object = json as? [String: Any] else {
            return json
        }
        for (key, value) in object {
            if let kind = Self.kinds[key] {
                if let token = value as? String {
                    object[key + "Decoded"] = try payload(token, kind, field: key)
                } else if let tokens = value as? [String] {
                    object[key + "Decoded"] = try tokens.enumerated().map { index, token in
                        try payload(token, kind, field: "\(key)[\(index)]")
                    }
                }
            } else {
                object[key] = try decode(value)
            }
        }
        return object
    }

    private func payload(_ token: String, _ kind: SignedDataKind, field: String) throws -> Any {
        do {
            let verified = try verifier.verify(token, as: kind)
            return try JSONSerialization.jsonObject(with: VerifyCommand.payloadJSON(verified))
        } catch let error as IAPError {
            var failure = error
            failure.message = "\(field): \(error.message)"
            throw failure
        }
    }
}
