import Foundation

/// Reads the tool's input: a file, or standard input for `-` or no argument.
enum Input {
    struct ReadError: Error {
        let message: String
    }

    static func read(_ path: String?) throws(ReadError) -> Data {
        if path == nil || path == "-" {
            if isatty(0) != 0 {
                FileHandle.standardError.write(Data("reading from standard input (end with Ctrl-D)\n".utf8))
            }
            return FileHandle.standardInput.readDataToEndOfFile()
        }
        guard let path else { return Data() }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ReadError(message: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// The text of one signed-data token: surrounding white space removed, and a notification body
    /// (`{"signedPayload": "..."}`) unwrapped.
    static func token(from data: Data) -> String {
        token(fromText: String(decoding: data, as: UTF8.self))
    }

    /// The token in one piece of text: a byte-order mark and surrounding white space removed, and a
    /// notification body (`{"signedPayload": "..."}`) unwrapped.
    static func token(fromText text: String) -> String {
        // The usual line is a bare JWS: it starts and ends with a base64url character, so there is nothing to trim
        // or unwrap (and trimming through Foundation would cost more than verifying it).
        if let first = text.utf8.first, let last = text.utf8.last, isTokenByte(first), isTokenByte(last) {
            return text
        }
        var text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("\u{FEFF}") {
            text = String(text.dropFirst()).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if text.hasPrefix("{"), let body = try? JSONDecoder().decode(NotificationBody.self, from: Data(text.utf8)) {
            return body.signedPayload
        }
        return text
    }

    /// Whether a byte is a base64url character or the `.` between a JWS's segments.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// A descriptor to read a streaming input from: the file, or standard input for `-` or no argument.
    static func descriptor(_ path: String?) throws(ReadError) -> Int32 {
        guard let path, path != "-" else {
            return 0
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReadError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    private struct NotificationBody: Decodable {
        let signedPayload: String
    }
}
