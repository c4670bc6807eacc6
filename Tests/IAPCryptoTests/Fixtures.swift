import Foundation
import IAPCore
import IAPCrypto

/// Loads the files in `Fixtures/` (copied into the test bundle).
enum Fixtures {
    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "Fixture \(name) is missing from the test bundle" }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw Missing(name: name)
        }
        return Array(try Data(contentsOf: url))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }

    static func json(_ name: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(try bytes(name)))
        guard let dictionary = object as? [String: Any] else {
            throw Missing(name: "\(name) (not a JSON object)")
        }
        return dictionary
    }

    static func certificate(_ name: String) throws -> X509Certificate {
        if name.hasSuffix(".pem") {
            return try X509Certificate(pemEncoded: try text(name))
        }
        return try X509Certificate(derEncoded: try bytes(name))
    }

    static func appleRoot() throws -> X509Certificate {
        try certificate("AppleRootCA-G3.cer")
    }

    /// A certificate from `chain-constants.json`, by key (standard base64 DER).
    static func chainConstant(_ key: String) throws -> X509Certificate {
        guard let base64 = try json("chain-constants.json")[key] as? String, let der = Data(base64Encoded: base64)
        else {
            throw Missing(name: "chain-constants.json[\(key)]")
        }
        return try X509Certificate(derEncoded: Array(der))
    }

    /// A millisecond timestamp from `chain-constants.json`.
    static func chainDate(_ key: String) throws -> Date {
        guard let milliseconds = try json("chain-constants.json")[key] as? NSNumber else {
            throw Missing(name: "chain-constants.json[\(key)]")
        }
        return Date(timeIntervalSince1970: milliseconds.doubleValue / 1000)
    }
}

/// Dates used across the tests (UTC).
enum Instants {
    static let jan2025 = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01T00:00:00Z
    static let jan2034 = Date(timeIntervalSince1970: 2_019_686_400)  // 2034-01-01T00:00:00Z
    static let dec2026 = Date(timeIntervalSince1970: 1_796_083_200)  // 2026-12-01T00:00:00Z
}

/// Small byte helpers for the tests.
enum Bytes {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func fromHex(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    /// `a - b` for 32-byte big-endian integers with `a >= b`.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var difference = Int(a[index]) - Int(b[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 {
                difference += 256
            }
            result[index] = UInt8(difference)
        }
        return result
    }
}

/// The order of the P-256 group, big-endian.
let p256Order = Bytes.fromHex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

extension AppStoreSignedDataVerifier.SkippedChecks {
    /// The checks a test's verifier leaves out: those it gives no value for.
    static func skipping(bundleId: String?, environment: AppStoreEnvironment?, appAppleId: Int64?) -> Self {
        var skipped: Self = []
        if bundleId == nil { skipped.insert(.bundleId) }
        if environment == nil { skipped.insert(.environment) }
        if appAppleId == nil { skipped.insert(.appAppleId) }
        return skipped
    }
}
