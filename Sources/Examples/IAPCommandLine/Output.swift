#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
public import Foundation

/// Buffered writes to standard output and standard error; the tools' only way to print.
public enum Output {
    nonisolated(unsafe) private static var buffer: [UInt8] = []

    /// Appends to standard output; flushed when large or when `flush()` is called.
    ///
    /// - Parameter text: What to write, as UTF-8.
    public static func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    /// Appends bytes to standard output, as they are.
    ///
    /// - Parameter bytes: What to write.
    public static func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    /// Appends data to standard output, as it is.
    ///
    /// - Parameter data: What to write.
    public static func write(_ data: Data) {
        buffer.append(contentsOf: data)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    /// Appends a line to standard output.
    ///
    /// - Parameter text: The line, without its `\n`.
    public static func line(_ text: String) {
        write(text)
        write("\n")
    }

    /// Writes what standard output holds.
    public static func flush() {
        guard !buffer.isEmpty else { return }
        writeAll(buffer, to: 1)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes one line to standard error, unbuffered.
    ///
    /// - Parameter text: The line, without its `\n`.
    public static func error(_ text: String) {
        writeAll(Array((text + "\n").utf8), to: 2)
    }

    /// A user id for a person to read: printable ASCII as it is (a backslash doubled), every other scalar as
    /// `\u{XXXX}`, so that two ids that look alike (an NFC and an NFD spelling) read apart and nothing in an id moves
    /// the cursor or turns the text around.
    ///
    /// - Parameter id: The user id.
    /// - Returns: The id, escaped.
    public static func escapedUserId(_ id: String) -> String {
        var escaped = ""
        for scalar in id.unicodeScalars {
            if scalar == "\\" {
                escaped += "\\\\"
            } else if scalar.isASCII, scalar.value >= 0x20, scalar.value < 0x7F {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return escaped
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                    let written = Glibc.write(descriptor, base + offset, raw.count - offset)
                #else
                    let written = Darwin.write(descriptor, base + offset, raw.count - offset)
                #endif
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    break
                }
                offset += written
            }
        }
    }
}

/// How a tool ends: its exit status.
public enum ExitCode: Int32, Sendable {
    /// 0: it did what was asked.
    case success = 0
    /// 1: the input was rejected or the work failed.
    case rejected = 1
    /// 2: the command line was wrong.
    case usage = 2
}

/// Flushes standard output and exits.
///
/// - Parameter code: The exit status.
public func terminate(_ code: ExitCode) -> Never {
    Output.flush()
    exit(code.rawValue)
}
