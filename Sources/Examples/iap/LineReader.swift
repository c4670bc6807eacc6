#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads lines from a file descriptor as they arrive, so a long input is processed while it streams in.
struct LineReader {
    /// One line, as ``next(maximumLength:)`` returns it.
    enum Line {
        /// The line's text, without its `\n` (and without a `\r` before it).
        case text(String)
        /// A line longer than the limit: its bytes were read and dropped, never held; `byteCount` counts them.
        case tooLong(byteCount: Int)
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    /// Reads from an open descriptor (not closed by the reader).
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line without its `\n` (and without a `\r` before it), or `nil` at the end of the input.
    mutating func next() -> String? {
        switch next(maximumLength: .max) {
        case .text(let line): line
        case .tooLong, nil: nil
        }
    }

    /// The next line, or ``Line/tooLong(byteCount:)`` for a line of more than `maximumLength` bytes, whose bytes are
    /// skipped as they arrive so that no line makes the reader hold more than `maximumLength` bytes plus one read;
    /// `nil` at the end of the input.
    mutating func next(maximumLength: Int) -> Line? {
        var skipped: Int?
        while true {
            if let newline = newlineIndex() {
                defer { start = newline + 1 }
                if let skipped {
                    return .tooLong(byteCount: skipped + newline - start)
                }
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") {
                    end -= 1
                }
                guard end - start <= maximumLength else {
                    return .tooLong(byteCount: newline - start)
                }
                return .text(String(decoding: buffer[start..<end], as: UTF8.self))
            }
            if finished {
                guard start < buffer.count || skipped != nil else { return nil }
                defer { start = buffer.count }
                if let skipped {
                    return .tooLong(byteCount: skipped + buffer.count - start)
                }
                guard buffer.count - start <= maximumLength else {
                    return .tooLong(byteCount: buffer.count - start)
                }
                return .text(String(decoding: buffer[start...], as: UTF8.self))
            }
            if skipped != nil || buffer.count - start > maximumLength {
                // Too long already: count what there is and keep none of it.
                skipped = (skipped ?? 0) + buffer.count - start
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            let count = chunk.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress, raw.count)
            }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
            } else if count < 0, errno == EINTR {
                continue
            } else {
                finished = true
            }
        }
    }

    /// The index of the first `\n` at or after `start`, found with `memchr`.
    private func newlineIndex() -> Int? {
        buffer.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, start < bytes.count,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
            else {
                return nil
            }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
    }
}
