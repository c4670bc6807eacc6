import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// The walk that refuses signed data with a repeated key finds every repeat, at any depth, after escapes, and
/// judges strict JSON as Foundation's parser does.
@Suite struct JSONDuplicateKeysTests {
    private func find(_ json: String) -> JSONDuplicateKeys.Finding {
        Array(json.utf8).withUnsafeBytes { JSONDuplicateKeys.find(in: $0) }
    }

    @Test(
        arguments: [
            #"{}"#, #"[]"#, #"{"a":1,"b":2}"#, #"{"a":{"a":{"a":1}}}"#, #"[{"a":1},{"a":2}]"#,
            #"{"a":[1,{"b":2,"c":3}]}"#,
            #"{"bundleId":1,"bundleID":2}"#, #"{"a\u0000":1,"a":2}"#, #" { "a" : "x\"y" , "b" : -0.5e+3 } "#, "42",
            #""text""#, "null", #"{"\ud83d\ude00":1,"\ud83d\ude01":2}"#,
        ]
    )
    func distinctKeys(json: String) {
        #expect(find(json) == .unique)
    }

    @Test(
        arguments: [
            (#"{"alg":"ES256","alg":"none"}"#, "alg", ""),
            (#"{"a":1,"b":{"c":1,"c":2}}"#, "c", "b"),
            (#"{"a":[0,{"x":{"y":[{},{"k":1,"k":1}]}}]}"#, "k", "a[1].x.y[1]"),
            (#"[{"k":1},{"k":1,"k":2}]"#, "k", "[1]"),
            (#"{"bundleId":"a","bundle\u0049d":"b"}"#, "bundleId", ""),
            (#"{"\u0062\u0075ndleId":"a","bundleId":"b"}"#, "bundleId", ""),
            (#"{"a\/b":1,"a/b":2}"#, "a/b", ""),
            (#"{"\ud83d\ude00":1,"😀":2}"#, "😀", ""),
            // Canonically equivalent keys are one key to a Swift decoder: é composed and decomposed, and the
            // Kelvin sign, whose canonical form is the letter K.
            (#"{"caf\u00e9":1,"cafe\u0301":2}"#, "café", ""),
            (#"{"Key":1,"\u212Aey":2}"#, "Key", ""),
        ]
    )
    func repeatedKeys(json: String, key: String, path: String) {
        guard case .duplicate(let found, let foundPath) = find(json) else {
            Issue.record("no duplicate found in \(json)")
            return
        }
        #expect(found == key)
        #expect(foundPath == path)
    }

    @Test(
        arguments: [
            "", "{", "}", "{]", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", ".5", "1e", "tru",
            "nul", #""\x""#, #""\u12""#, #""\ud800""#, #""\udc00x""#, "\"a\u{1}\"", "{} {}", "[1] x", #"{"a":1}}"#,
        ]
    )
    func malformed(json: String) {
        #expect(find(json) == .malformed)
    }

    @Test func deepNestingNeitherOverflowsNorMissesARepeat() {
        let depth = 100_000
        let open = String(repeating: #"{"a":"#, count: depth)
        let close = String(repeating: "}", count: depth)
        #expect(find(open + "1" + close) == .unique)
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(find(arrays) == .unique)
        let repeated = open + #"{"b":1,"b":2}"# + close
        guard case .duplicate(let key, let path) = find(repeated) else {
            Issue.record("the repeat at the bottom was not found")
            return
        }
        #expect(key == "b")
        #expect(path.split(separator: ".").count == depth)
    }

    /// Random edits of JSON near the App Store's shapes: the walk reads what Foundation's parser reads and refuses
    /// what it refuses, with two known differences: Foundation accepts a trailing comma (`[1,]`), which is not
    /// JSON (the verifier refuses such a document once its decoder has read it), and refuses a number beyond
    /// `Double` (`9e990`), which is JSON (the decoder then refuses it).
    @Test func agreesWithFoundationOnMutatedJSON() throws {
        let seeds = [
            #"{"transactionId":"1","bundleId":"com.example.app","price":9990,"isUpgraded":false,"x":null}"#,
            #"{"data":{"bundleId":"a","environment":"Sandbox","list":[1,2.5,-3e2,"s\"\\\u0041"]},"v":"2.0"}"#,
            #"[{"a":1},{"b":[true,false,null]},{"c":{"d":{}}}]"#,
        ]
        let alphabet = Array(#"{}[]:,"\ab01-.eE uU+/"#.utf8)
        var random = SplitMix64(seed: 0xD0D0)
        for _ in 0..<6_000 {
            let seed = Array(seeds[Int(random.next() % UInt64(seeds.count))].utf8)
            let input = random.mutate(seed, alphabet: alphabet)
            let finding = input.withUnsafeBytes { JSONDuplicateKeys.find(in: $0) }
            let parsed = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
            let text = String(decoding: input, as: UTF8.self)
            switch finding {
            case .malformed:
                let trailingComma = text.contains(/,\s*[}\]]/)
                #expect(parsed == nil || trailingComma, "Foundation reads what the walk refused: \(text)")
            case .unique, .duplicate:
                let hugeNumber = text.contains(/[0-9][eE][+]?[0-9]{3,}/)
                #expect(parsed != nil || hugeNumber, "the walk reads what Foundation refused: \(text)")
            }
        }
    }
}
