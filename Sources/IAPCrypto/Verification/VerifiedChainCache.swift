#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Remembers certificate chains that already validated, so that a token from a known chain costs one
/// ECDSA verification instead of three.
///
/// An entry is keyed by the DER bytes of the leaf and the intermediate (the `x5c` root is never
/// trusted, so it is not part of the key) and remembers the window in which every certificate of the
/// validated chain is inside its validity period. A lookup at an instant outside that window misses, so
/// the full validation runs and reports the precise failure. A second index by the exact encoded JWS
/// header lets a repeated header skip JSON and base64 decoding entirely; a hit there is confirmed by
/// comparing the whole header, never by its hash alone.
///
/// The cache holds at most `capacity` chains and evicts the least recently inserted one.
final class VerifiedChainCache: Sendable {
    struct Entry: Sendable {
        let leafKey: P256PublicKey
        let validFrom: Date
        let validUntil: Date

        func covers(_ instant: Date) -> Bool {
            validFrom <= instant && instant <= validUntil
        }
    }

    struct ChainKey: Hashable, Sendable {
        let leaf: [UInt8]
        let intermediate: [UInt8]
    }

    /// A remembered encoded header and the chain it carries.
    private struct HeaderEntry {
        let bytes: [UInt8]
        let chain: ChainKey
        let entry: Entry
    }

    /// Hashes an encoded header by its length and a sample of its bytes (headers are several KiB);
    /// a match is always confirmed by comparing every byte.
    private static func headerHash(_ header: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(header.count)
        guard let base = header.baseAddress, header.count >= 8 else {
            hasher.combine(bytes: UnsafeRawBufferPointer(header))
            return hasher.finalize()
        }
        // Sixteen 8-byte words spread over the header, the last one ending at its last byte.
        let raw = UnsafeRawPointer(base)
        let span = header.count - 8
        for sample in 0..<16 {
            hasher.combine(raw.loadUnaligned(fromByteOffset: span * sample / 15, as: UInt64.self))
        }
        return hasher.finalize()
    }

    private static func equal(_ stored: [UInt8], _ header: UnsafeBufferPointer<UInt8>) -> Bool {
        guard stored.count == header.count else { return false }
        return stored.withUnsafeBufferPointer { stored in
            guard let left = stored.baseAddress, let right = header.baseAddress else { return stored.isEmpty }
            return memcmp(left, right, stored.count) == 0
        }
    }

    private struct State {
        var byChain: [ChainKey: Entry] = [:]
        var byHeader: [Int: [HeaderEntry]] = [:]
        var headerCount: [ChainKey: Int] = [:]
        var insertionOrder: [ChainKey] = []

        mutating func removeHeaders(of chain: ChainKey) {
            for (hash, entries) in byHeader where entries.contains(where: { $0.chain == chain }) {
                let kept = entries.filter { $0.chain != chain }
                byHeader[hash] = kept.isEmpty ? nil : kept
            }
            headerCount[chain] = nil
        }
    }

    let capacity: Int
    private let state = LockedValue(State())

    init(capacity: Int) {
        self.capacity = Swift.max(0, capacity)
    }

    var count: Int {
        state.withLock { $0.byChain.count }
    }

    func entry(forHeader header: UnsafeBufferPointer<UInt8>) -> Entry? {
        guard capacity > 0 else { return nil }
        let hash = Self.headerHash(header)
        return state.withLock { state in
            state.byHeader[hash]?.first(where: { Self.equal($0.bytes, header) })?.entry
        }
    }

    func entry(for key: ChainKey) -> Entry? {
        guard capacity > 0 else { return nil }
        return state.withLock { $0.byChain[key] }
    }

    /// Records that `key` validated, and that `header` carries that chain.
    func insert(_ entry: Entry, for key: ChainKey, header: UnsafeBufferPointer<UInt8>) {
        guard capacity > 0 else { return }
        let hash = Self.headerHash(header)
        let bytes = Array(header)
        state.withLock { state in
            if state.byChain[key] == nil {
                state.insertionOrder.append(key)
                while state.insertionOrder.count > capacity {
                    let evicted = state.insertionOrder.removeFirst()
                    state.byChain[evicted] = nil
                    state.removeHeaders(of: evicted)
                }
            }
            state.byChain[key] = entry
            var entries = state.byHeader[hash] ?? []
            if let index = entries.firstIndex(where: { Self.equal($0.bytes, header) }) {
                entries[index] = HeaderEntry(bytes: bytes, chain: key, entry: entry)
            } else {
                // Bound the header variants per chain: a sender can vary unknown header fields at will.
                if state.headerCount[key, default: 0] >= 8 {
                    state.removeHeaders(of: key)
                    entries = state.byHeader[hash] ?? []
                }
                entries.append(HeaderEntry(bytes: bytes, chain: key, entry: entry))
                state.headerCount[key, default: 0] += 1
            }
            state.byHeader[hash] = entries
        }
    }
}
