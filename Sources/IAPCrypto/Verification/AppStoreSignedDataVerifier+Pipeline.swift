#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension AppStoreSignedDataVerifier {
    /// Parses a token's shape (``CompactJWS``) and hands it to `body`, which must not keep it.
    func withParsed<Result>(_ token: String, _ body: (CompactJWS) throws -> Result) throws -> Result {
        var token = token
        return try token.withUTF8 { bytes in
            try body(CompactJWS(bytes))
        }
    }

    /// Verifies a parsed token and decodes its payload; `checkKind` sees the decoded payload and its bytes once the
    /// signature held, and throws when the payload is another kind of signed data than the one asked for.
    /// `decoded` is the payload when the caller already decoded it exactly as `decodePayload(_:as:)` would.
    func verifiedPayload<Payload: SignedPayload>(
        _ jws: CompactJWS,
        decoded: Payload?,
        checkKind: (Payload, [UInt8]) throws -> Void
    ) throws -> Payload {
        // A header seen before already passed its checks; any other is checked before the payload is
        // read, so a refused algorithm or a malformed header is reported as such whatever the payload holds.
        let headerEntry = cache.entry(forHeader: jws.header)
        let checkedHeader = headerEntry == nil ? try jws.decodeHeader() : nil
        let payload = try decoded ?? decodePayload(jws.payload, as: Payload.self)
        try verifySignedBytes(jws, payload: payload, headerEntry: headerEntry, checkedHeader: checkedHeader)
        try checkKind(payload, jws.payload)
        return payload
    }

    private func verifySignedBytes<Payload: SignedPayload>(
        _ jws: CompactJWS,
        payload: Payload,
        headerEntry: VerifiedChainCache.Entry?,
        checkedHeader: CompactJWS.Header?
    ) throws {
        let instant = validationInstant(for: payload)

        if let headerEntry, headerEntry.covers(instant) {
            try checkSignature(jws, key: headerEntry.leafKey)
            return
        }

        let header = try checkedHeader ?? jws.decodeHeader()
        if header.certificateChain.count == 1, header.keyId == "Apple_Xcode_Key" || isUnsignedEnvironment(payload) {
            try verifyXcodeSigned(jws, header: header, payload: payload)
            return
        }
        guard header.certificateChain.count == 3 else {
            throw IAPError(
                .malformedSignedData,
                "x5c must hold exactly 3 certificates (leaf, intermediate, root), found \(header.certificateChain.count)"
            )
        }
        let key = VerifiedChainCache.ChainKey(
            leaf: header.certificateChain[0],
            intermediate: header.certificateChain[1]
        )
        if let entry = cache.entry(for: key), entry.covers(instant) {
            try checkSignature(jws, key: entry.leafKey)
            cache.insert(entry, for: key, header: jws.header)
            return
        }

        let entry = try validateChain(leaf: key.leaf, intermediate: key.intermediate, at: instant)
        try checkSignature(jws, key: entry.leafKey)
        cache.insert(entry, for: key, header: jws.header)
    }

    private func validateChain(leaf leafDER: [UInt8], intermediate intermediateDER: [UInt8], at instant: Date) throws
        -> VerifiedChainCache.Entry
    {
        let leaf: X509Certificate
        let intermediate: X509Certificate
        do {
            leaf = try X509Certificate(derEncoded: leafDER)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[0] (leaf): \(error.message)", underlying: error)
        }
        do {
            intermediate = try X509Certificate(derEncoded: intermediateDER)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[1] (intermediate): \(error.message)", underlying: error)
        }
        guard let leafKey = leaf.p256PublicKey else {
            throw IAPError(.certificateInvalid, "the leaf certificate's key is not an EC P-256 key, as ES256 requires")
        }
        let chain = try trustStore.validate(
            leaf: leaf,
            intermediates: [intermediate],
            at: instant,
            strict: configuration.strictX509
        )
        guard chain.count == 3 else {
            throw IAPError(
                .certificateChainInvalid,
                "the chain must be leaf, intermediate and root (3 certificates), built \(chain.count)"
            )
        }
        guard chain[0].hasExtension(oid: Self.leafMarkerOID) else {
            throw IAPError(
                .missingAppleMarker,
                "the leaf certificate lacks Apple's marker extension \(Self.leafMarkerOID)"
            )
        }
        guard chain[1].hasExtension(oid: Self.intermediateMarkerOID) else {
            throw IAPError(
                .missingAppleMarker,
                "the intermediate certificate lacks Apple's marker extension \(Self.intermediateMarkerOID)"
            )
        }
        let validFrom = chain.map(\.notBefore).max() ?? instant
        let validUntil = chain.map(\.notAfter).min() ?? instant
        return VerifiedChainCache.Entry(leafKey: leafKey, validFrom: validFrom, validUntil: validUntil)
    }

    private func checkSignature(_ jws: CompactJWS, key: P256PublicKey) throws {
        let valid = jws.signature.withUnsafeBytes { signature in
            key.isValidSignature(signature, for: UnsafeRawBufferPointer(jws.signingInput))
        }
        guard valid else {
            throw IAPError(.signatureInvalid, "the ES256 signature does not match the signed data")
        }
    }

    private func verifyXcodeSigned<Payload: SignedPayload>(
        _ jws: CompactJWS,
        header: CompactJWS.Header,
        payload: Payload
    ) throws {
        guard configuration.acceptsXcodeSignedData else {
            throw IAPError(
                .unsignedEnvironmentRejected,
                "this data was signed by Xcode's StoreKit Testing, not by the App Store; "
                    + "accept it only in development (acceptsXcodeSignedData; iap verify --environment Xcode)"
            )
        }
        guard isUnsignedEnvironment(payload) else {
            throw IAPError(
                .unsignedEnvironmentRejected,
                "a single self-signed certificate is only acceptable for Xcode or LocalTesting data"
            )
        }
        // Not proof of a purchase, but proof the token is intact: check it against its own certificate.
        guard let der = header.certificateChain.first else {
            throw IAPError(.malformedSignedData, "x5c is empty")
        }
        let certificate: X509Certificate
        do {
            certificate = try X509Certificate(derEncoded: der)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[0]: \(error.message)", underlying: error)
        }
        guard let key = certificate.p256PublicKey else {
            throw IAPError(.certificateInvalid, "the Xcode certificate's key is not an EC P-256 key")
        }
        try checkSignature(jws, key: key)
    }

    func decodePayload<Payload: SignedPayload>(_ bytes: [UInt8], as type: Payload.Type) throws -> Payload {
        guard CompactJWS.isJSONObject(bytes) else {
            throw IAPError(.malformedSignedData, "the JWS payload is not a JSON object")
        }
        // The fast decoder answers only for flat objects whose keys are all distinct.
        if type == TransactionPayload.self,
            let fast = bytes.withUnsafeBytes({ FastTransactionDecoder.decode($0) }) as? Payload
        {
            return fast
        }
        let strict = try CompactJWS.checkDistinctKeys(bytes, segment: "payload")
        let payload: Payload
        do {
            payload = try decoder.decode(type, from: Data(bytes))
        } catch {
            throw IAPError(
                .malformedSignedData,
                "the JWS payload is not a valid \(Self.kindName(type)): \(Self.describe(error))",
                underlying: SendableErrorBox(error)
            )
        }
        guard strict else {
            throw CompactJWS.notStrictJSON("payload")
        }
        return payload
    }

    private func validationInstant(for payload: some SignedPayload) -> Date {
        switch configuration.validationTime {
        case .signedDate: payload.signingDate ?? configuration.clock.now
        case .now: configuration.clock.now
        case .fixed(let instant): instant
        }
    }
}
