#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
import IAPCore

/// Reads a journal or snapshot file as records, a chunk at a time, decoding each chunk's lines in parallel.
///
/// Memory stays bounded by the chunk size whatever the file's size; the handler sees the records in file
/// order.
enum RecordFileReader {
    /// One line of a file.
    struct Line: Sendable {
        /// The byte offset of its first byte.
        var offset: Int
        /// Its length, without the newline.
        var length: Int
        /// Its 1-based line number.
        var number: Int
        /// The record, or why it could not be read.
        var result: Result<JournalRecord.Decoded, JournalRecord.Problem>

        /// Moves a decoded record out of the line, which keeps its place (offset, length, number) and, when the
        /// record could not be read, the problem: the caller takes the record over without copying its fields.
        mutating func takeResult() -> Result<JournalRecord.Decoded, JournalRecord.Problem> {
            guard case .success = result else {
                return result
            }
            var taken = Result<JournalRecord.Decoded, JournalRecord.Problem>.failure(.init(reason: "taken"))
            swap(&taken, &result)
            return taken
        }
    }

    /// What follows the last newline of a file.
    struct Tail: Sendable {
        /// The file's size.
        var fileSize: Int
        /// Where the bytes after the last newline start (`fileSize` when there are none).
        var offset: Int
        /// The line number those bytes would have.
        var lineNumber: Int
    }

    /// Reads every complete line of `path` and hands the decoded lines to `handle`, in order.
    ///
    /// While `handle` works through one chunk's lines, the next chunk is read and decoded on other threads, so
    /// reading, checking and decoding overlap with what the caller does with the records.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: Read only this many bytes from the start, when given.
    ///   - chunkSize: How many bytes to read and decode at a time.
    ///   - handle: Called with each chunk's lines in file order; it may take the records out of them.
    /// - Returns: Where the incomplete last line starts, if the file does not end with a newline.
    /// - Throws: ``IAPError`` with code `storageFailure` if the file cannot be read, or what `handle` throws.
    static func read(
        path: String,
        upTo limit: Int? = nil,
        chunkSize: Int = 2 << 20,
        handle: (inout [Line]) throws -> Void
    ) throws -> Tail {
        let chunks = Chunks(file: try SystemFile.open(path, flags: O_RDONLY), limit: limit, chunkSize: chunkSize)
        var current = try chunks.next()
        while var lines = current {
            let upcoming = Upcoming()
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                upcoming.result = Result { try chunks.next() }
            }
            do {
                try handle(&lines)
            } catch {
                group.wait()
                throw error
            }
            group.wait()
            current = try upcoming.result.get()
        }
        return chunks.tail
    }

    /// The next chunk's lines, read and decoded while the caller handles the current ones.
    private final class Upcoming: @unchecked Sendable {
        // Written by the reading thread before the group leaves, read by the caller after it waits.
        var result: Result<[Line]?, any Error> = .success(nil)
    }

    /// A file read a chunk at a time. Used by one thread at a time: the caller waits before it reads the next.
    private final class Chunks: @unchecked Sendable {
        private let file: SystemFile
        private let limit: Int?
        private var buffer: [UInt8]
        private var filled = 0
        /// The file offset of `buffer[0]`.
        private var consumedBefore = 0
        private var lineNumber = 1
        private var reachedEnd = false

        init(file: SystemFile, limit: Int?, chunkSize: Int) {
            self.file = file
            self.limit = limit
            buffer = [UInt8](repeating: 0, count: chunkSize)
        }

        /// What follows the last newline, once ``next()`` returned `nil`.
        var tail: Tail {
            Tail(fileSize: consumedBefore + filled, offset: consumedBefore, lineNumber: lineNumber)
        }

        /// The decoded complete lines of the next chunk, or `nil` at the end of the file.
        func next() throws -> [Line]? {
            while !reachedEnd {
                if filled == buffer.count {
                    // One line longer than the buffer: make room.
                    buffer += [UInt8](repeating: 0, count: buffer.count)
                }
                let room = limit.map { max(0, min(buffer.count - filled, $0 - consumedBefore - filled)) }
                let count = try buffer.withUnsafeMutableBytes { raw in
                    try file.read(
                        into: UnsafeMutableRawBufferPointer(
                            rebasing: raw[filled..<(filled + (room ?? raw.count - filled))]
                        )
                    )
                }
                if count == 0 {
                    reachedEnd = true
                }
                filled += count
                let ranges = RecordFileReader.lineRanges(in: buffer, count: filled)
                guard !ranges.isEmpty else {
                    continue
                }
                let lines = RecordFileReader.decode(
                    buffer,
                    ranges: ranges,
                    firstOffset: consumedBefore,
                    firstLine: lineNumber
                )
                lineNumber += ranges.count
                let consumed = (ranges.last?.upperBound ?? 0) + 1
                buffer.withUnsafeMutableBytes { raw in
                    if let base = raw.baseAddress, filled > consumed {
                        memmove(base, base + consumed, filled - consumed)
                    }
                }
                filled -= consumed
                consumedBefore += consumed
                return lines
            }
            return nil
        }
    }

    /// The ranges of the complete lines (without their newlines) in `buffer[..<count]`.
    private static func lineRanges(in buffer: [UInt8], count: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else {
                return
            }
            var start = 0
            while start < count,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), count - start)
            {
                let end = base.distance(to: UnsafeRawPointer(found))
                ranges.append(start..<end)
                start = end + 1
            }
        }
        return ranges
    }

    /// Decodes the lines at `ranges` in parallel, each straight into its place in the result.
    private static func decode(_ buffer: [UInt8], ranges: [Range<Int>], firstOffset: Int, firstLine: Int) -> [Line] {
        let slices = min(ranges.count, max(1, ProcessInfo.processInfo.activeProcessorCount) * 4)
        return [Line](unsafeUninitializedCapacity: ranges.count) { results, initialized in
            buffer.withUnsafeBytes { raw in
                // Each iteration reads the shared buffer and writes its own disjoint range of `results`.
                let shared = SharedPointers(bytes: raw, output: results)
                DispatchQueue.concurrentPerform(iterations: slices) { slice in
                    let bytes = shared.bytes
                    let output = shared.output
                    let decoder = RecordDecoder()
                    let lower = ranges.count * slice / slices
                    let upper = ranges.count * (slice + 1) / slices
                    for index in lower..<upper {
                        let range = ranges[index]
                        let line = UnsafeRawBufferPointer(rebasing: bytes[range])
                        output.initializeElement(
                            at: index,
                            to: Line(
                                offset: firstOffset + range.lowerBound,
                                length: range.count,
                                number: firstLine + index,
                                result: JournalRecord.decode(line, decoder: decoder)
                            )
                        )
                    }
                }
            }
            initialized = ranges.count
        }
    }
}

/// The buffers that parallel decoding shares: read-only input, and output written at disjoint indices.
private struct SharedPointers<Element>: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
    let output: UnsafeMutableBufferPointer<Element>
}
