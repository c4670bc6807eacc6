package import Foundation
package import IAPCore
package import Testing

/// Loads the files in `Fixtures/` (see `Fixtures/README.md` for where each comes from).
package enum Fixture {
    package struct Missing: Error {
        package let name: String
    }

    /// The bytes of `Fixtures/<name>.json`.
    package static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
            throw Missing(name: name)
        }
        return try Data(contentsOf: url)
    }

    /// The URL of `Fixtures/<name>.<fileExtension>`.
    package static func url(_ name: String, fileExtension: String) throws -> URL {
        guard
            let url = Bundle.module.url(forResource: name, withExtension: fileExtension, subdirectory: "Fixtures")
        else {
            throw Missing(name: "\(name).\(fileExtension)")
        }
        return url
    }

    /// `Fixtures/<name>.json` decoded with the App Store decoder.
    package static func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try AppStoreJSON.makeDecoder().decode(type, from: data(name))
    }
}

/// Decodes JSON text with the App Store decoder.
package func decode<T: Decodable>(_ type: T.Type, json: String) throws -> T {
    try AppStoreJSON.makeDecoder().decode(type, from: Data(json.utf8))
}

/// Encodes a value with the App Store encoder and returns the JSON text.
package func encodedJSON(_ value: some Encodable) throws -> String {
    String(decoding: try AppStoreJSON.makeEncoder().encode(value), as: UTF8.self)
}

/// Canonical JSON text of any JSON document, to compare documents regardless of key order and spacing.
package func canonicalJSON(_ data: Data) throws -> String {
    let object = try JSONSerialization.jsonObject(with: data)
    let canonical = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: canonical, as: UTF8.self)
}

/// Checks that a value survives encode → decode unchanged and that encoding is stable.
package func expectRoundTrip<T: Codable & Equatable>(
    _ value: T,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let encoded = try AppStoreJSON.makeEncoder().encode(value)
    let decoded = try AppStoreJSON.makeDecoder().decode(T.self, from: encoded)
    #expect(decoded == value, sourceLocation: sourceLocation)
    let reencoded = try AppStoreJSON.makeEncoder().encode(decoded)
    #expect(reencoded == encoded, sourceLocation: sourceLocation)
}

/// Checks that a fixture re-encodes to the same JSON document: no field lost, renamed or altered.
package func expectReencodesIdentically<T: Codable>(
    _ type: T.Type,
    fixture name: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let original = try Fixture.data(name)
    let value = try AppStoreJSON.makeDecoder().decode(type, from: original)
    let reencoded = try AppStoreJSON.makeEncoder().encode(value)
    #expect(try canonicalJSON(reencoded) == canonicalJSON(original), sourceLocation: sourceLocation)
}

/// Milliseconds since 1970 of an optional date, for comparing with the numbers in fixtures.
package func ms(_ date: Date?) -> Int64? {
    date?.millisecondsSince1970
}

/// The text of `Fixtures/<name>.json`.
package func fixtureText(_ name: String) throws -> String {
    String(decoding: try Fixture.data(name), as: UTF8.self)
}

/// Runs `body` and returns the `IAPError` it throws, recording an issue if it throws nothing or something else.
package func apiFailure(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> IAPError? {
    do {
        try await body()
        Issue.record("expected an IAPError, got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as IAPError {
        return error
    } catch {
        Issue.record("expected an IAPError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
