import Foundation
import IAPCore
import Testing

/// Loads the files in `Fixtures/` (see `Fixtures/README.md` for where each comes from).
enum Fixture {
    struct Missing: Error {
        let name: String
    }

    /// The bytes of `Fixtures/<name>.json`.
    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
            throw Missing(name: name)
        }
        return try Data(contentsOf: url)
    }

    /// The URL of `Fixtures/<name>.<fileExtension>`.
    static func url(_ name: String, fileExtension: String) throws -> URL {
        guard
            let url = Bundle.module.url(forResource: name, withExtension: fileExtension, subdirectory: "Fixtures")
        else {
            throw Missing(name: "\(name).\(fileExtension)")
        }
        return url
    }

    /// `Fixtures/<name>.json` decoded with the App Store decoder.
    static func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try AppStoreJSON.makeDecoder().decode(type, from: data(name))
    }
}

/// Decodes JSON text with the App Store decoder.
func decode<T: Decodable>(_ type: T.Type, json: String) throws -> T {
    try AppStoreJSON.makeDecoder().decode(type, from: Data(json.utf8))
}

/// Encodes a value with the App Store encoder and returns the JSON text.
func encodedJSON(_ value: some Encodable) throws -> String {
    String(decoding: try AppStoreJSON.makeEncoder().encode(value), as: UTF8.self)
}

/// Canonical JSON text of any JSON document, to compare documents regardless of key order and spacing.
func canonicalJSON(_ data: Data) throws -> String {
    let object = try JSONSerialization.jsonObject(with: data)
    let canonical = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: canonical, as: UTF8.self)
}

/// Checks that a value survives encode → decode unchanged and that encoding is stable.
func expectRoundTrip<T: Codable & Equatable>(
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
func expectReencodesIdentically<T: Codable>(
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
func ms(_ date: Date?) -> Int64? {
    date?.millisecondsSince1970
}
