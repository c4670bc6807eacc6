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
        var text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("\u{FEFF}") {
            text = String(text.dropFirst()).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if text.hasPrefix("{"), let body = try? JSONDecoder().decode(NotificationBody.self, from: Data(text.utf8)) {
            return body.signedPayload
        }
        return text
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
