import IAPCore
import Testing

/// The scanner the fast decoders share reads one token or refuses, and never guesses.
@Suite struct JSONScannerTests {
    private static func scan<T>(_ json: String, _ read: (inout JSONScanner) -> T) -> (value: T, rest: Int) {
        Array(json.utf8).withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes)
            let value = read(&scanner)
            return (value, bytes.count - scanner.index)
        }
    }

    @Test(
        arguments: [
            ("0", 0), ("-0", 0), ("42,", 42), ("-17}", -17), ("9223372036854775807", Int64.max),
            ("-9223372036854775808", Int64.min), ("7 ", 7),
        ] as [(String, Int64)]
    )
    func integersThatJSONAndInt64Both(json: String, expected: Int64) {
        #expect(Self.scan(json) { $0.integer() }.value == expected)
    }

    @Test(arguments: ["", "-", "01", "1.0", "1e3", "9223372036854775808", "-9223372036854775809", "12a", "+1", "0x1"])
    func integersItLeavesToTheFullDecoder(json: String) {
        let scanned = Self.scan(json) { $0.integer() }
        #expect(scanned.value == nil)
        #expect(scanned.rest == json.utf8.count, "a refused integer consumes nothing")
    }

    @Test func stringsArePrintableASCIIWithoutEscapes() {
        #expect(Self.scan(#""com.example.app","#) { $0.text() }.value == "com.example.app")
        #expect(Self.scan(#""""#) { $0.text() }.value == "")
        for refused in [#""a\"b""#, "\"caf\u{E9}\"", "\"tab\there\"", #""unterminated"#, "plain"] {
            #expect(Self.scan(refused) { $0.text() }.value == nil, "\(refused)")
        }
    }

    @Test func literalsMustEndTheValue() {
        #expect(Self.scan("true}") { $0.bool() }.value == true)
        #expect(Self.scan("false") { $0.bool() }.value == false)
        #expect(Self.scan("truex") { $0.bool() }.value == nil)
        #expect(Self.scan("nul") { $0.literal("null") }.value == false)
        let optional = Self.scan("null,") { $0.optional { $0.integer() } }
        #expect(optional.value == .some(nil))
        #expect(optional.rest == 1)
        #expect(Self.scan("5}") { $0.optional { $0.integer() } }.value == .some(5))
        #expect(Self.scan("\"5\"") { $0.optional { $0.integer() } }.value == nil)
    }

    @Test func keyTablesFindOnlyTheirKeys() {
        let keys = JSONKeyTable(["transactionId", "productId", "bundleId", "type"])
        func lookUp(_ name: String) -> Int? { Array(name.utf8).withUnsafeBytes { keys.index(of: $0) } }
        #expect(lookUp("transactionId") == 0)
        #expect(lookUp("productId") == 1)
        #expect(lookUp("bundleId") == 2)
        #expect(lookUp("type") == 3)
        #expect(lookUp("productid") == nil)
        #expect(lookUp("typ") == nil)
        #expect(lookUp("") == nil)
        #expect(lookUp(String(repeating: "x", count: 200)) == nil)
        #expect(JSONKeyTable([]).index(of: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }
}
