#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore

/// An append-only file of JSON values, one a line, each appended with `fsync` before the call returns.
///
/// Opening reads every complete line; a last line without its newline is a write torn by a crash and is cut off
/// (its call never returned). A complete line that does not decode is corruption (`storageCorrupted`), never skipped.
/// The file is locked (`flock`) for as long as it is open: one process at a time appends and keeps an index of it.
/// Its owner (one actor) makes every call, which is what makes the `@unchecked Sendable` safe.
final class JSONLinesFile: @unchecked Sendable {
    private let file: SystemFile
    let path: String

    /// Opens (creating) the file and locks it.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - isPrivate: Whether the file is the owner's alone (0600) and refused when a symbolic link stands in its
    ///     place.
    /// - Throws: ``IAPError`` `storageLocked` when another process holds it, `storageFailure` otherwise.
    init(path: String, isPrivate: Bool = false) throws {
        self.path = path
        file = try SystemFile.open(path, flags: O_RDWR | O_CREAT | O_APPEND | (isPrivate ? O_NOFOLLOW : 0))
        if isPrivate, fchmod(file.descriptor, 0o600) != 0 {
            throw SystemFile.failure("chmod", path)
        }
        guard try file.tryExclusiveLock() else {
            throw IAPError(
                .storageLocked,
                "\(path) is open elsewhere (another process, or another open log in this one)"
            )
        }
    }

    /// Every complete line, decoded, oldest first; cuts off a torn last line.
    func readAll<Value: Decodable>(_ type: Value.Type) throws -> [Value] {
        let lines = try readLines()
        let decoder = AppStoreJSON.makeDecoder()
        var values: [Value] = []
        var number = 0
        for line in lines where !line.isEmpty {
            number += 1
            do {
                values.append(try decoder.decode(Value.self, from: Data(line)))
            } catch {
                throw IAPError.wrapping(error, as: .storageCorrupted, "line \(number) of \(path) does not decode")
            }
        }
        return values
    }

    /// Every complete line's bytes (without its line break, empty lines kept), oldest first; cuts off a torn last
    /// line.
    func readLines() throws -> [ArraySlice<UInt8>] {
        let (lines, torn) = try Self.lines(of: path)
        if torn {
            try file.truncate(to: lines.last.map { $0.endIndex + 1 } ?? 0)
            try file.sync()
        }
        return lines
    }

    /// The complete lines of a file, read without opening it for writing, and whether a torn last line (no line
    /// break) followed them.
    static func lines(of path: String) throws -> (lines: [ArraySlice<UInt8>], torn: Bool) {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw IAPError.wrapping(error, as: .storageFailure, "cannot read \(path)")
        }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // The piece after the last line break: empty for a whole file, a torn line otherwise.
        let rest = lines.removeLast()
        return (lines, !rest.isEmpty)
    }

    /// Appends one value as a line and flushes it to the device.
    ///
    /// A write or flush that fails (a full disk, an I/O error) is taken back: the file is cut to its size before the
    /// call, so a torn line is never glued to the next append. If even that fails, later appends are refused until
    /// the file is opened again (which cuts a torn last line).
    func append(_ value: some Encodable) throws {
        let bytes: [UInt8]
        do {
            bytes = Array(try AppStoreJSON.makeEncoder().encode(value))
        } catch {
            throw IAPError.wrapping(error, as: .invalidArgument, "the value cannot be encoded for \(path)")
        }
        try append(line: bytes)
    }

    /// Appends bytes (holding no line break) as one line and flushes it to the device, as ``append(_:)``.
    func append(line: [UInt8]) throws {
        var bytes = line
        bytes.append(UInt8(ascii: "\n"))
        if let tornAt {
            throw IAPError(
                .storageFailure,
                "\(path) holds a torn line at byte \(tornAt) that could not be cut off; open it again"
            )
        }
        let size = try file.size()
        do {
            try file.write(bytes)
            try file.sync()
        } catch {
            do {
                try file.truncate(to: size)
                try file.sync()
            } catch {
                tornAt = size
            }
            throw error
        }
    }

    /// The file's size in bytes, through its descriptor.
    func size() throws -> Int {
        try file.size()
    }

    /// Whether the path still names this open file (it was neither deleted nor replaced).
    func isStillAtItsPath() throws -> Bool {
        try file.isStillAtItsPath()
    }

    /// Where a failed append that could not be taken back began, if one did.
    private var tornAt: Int?

    /// Closes the file (and releases its lock).
    func close() {
        file.close()
    }
}
