#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

/// Buffered writes to standard output and standard error; the tool's only way to print.
enum Output {
    nonisolated(unsafe) private static var buffer: [UInt8] = []

    /// Appends to standard output; flushed when large or when `flush()` is called.
    static func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    static func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    static func write(_ data: Data) {
        buffer.append(contentsOf: data)
        if buffer.count >= 1 << 16 {
            flush()
        }
    }

    static func line(_ text: String) {
        write(text)
        write("\n")
    }

    static func flush() {
        guard !buffer.isEmpty else { return }
        writeAll(buffer, to: 1)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes one line to standard error, unbuffered.
    static func error(_ text: String) {
        writeAll(Array((text + "\n").utf8), to: 2)
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

/// How the tool ends.
enum ExitCode: Int32 {
    case success = 0
    case rejected = 1
    case usage = 2
}

func terminate(_ code: ExitCode) -> Never {
    Output.flush()
    exit(code.rawValue)
}
