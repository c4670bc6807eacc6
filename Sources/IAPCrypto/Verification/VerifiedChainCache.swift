#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization

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

    /// The exact header segment, hashed by sampling (headers are several KiB), compared in full.
    struct HeaderKey: Hashable, Sendable {
        let bytes: [UInt8]

        init(_ segment: Substring) {
            self.bytes = Array(segment.utf8)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            let count = bytes.count
            guard count > 0 else { return }
            let samples = Swift.min(count, 64)
            let stride = count / samples
            bytes.withUnsafeBufferPointer { buffer in
                var index = count - 1
                for _ in 0..<samples {
                    hasher.combine(buffer[index])
                    index -= stride
                }
            }
        }
    }

    private struct State {
        var byChain: [ChainKey: Entry] = [:]
        var byHeader: [HeaderKey: Entry] = [:]
        var headersOfChain: [ChainKey: [HeaderKey]] = [:]
        var insertionOrder: [ChainKey] = []
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = Swift.max(0, capacity)
    }

    var count: Int {
        state.withLock { $0.byChain.count }
    }

    func entry(forHeader segment: Substring) -> Entry? {
        guard capacity > 0 else { return nil }
        let key = HeaderKey(segment)
        return state.withLock { $0.byHeader[key] }
    }

    func entry(for key: ChainKey) -> Entry? {
        guard capacity > 0 else { return nil }
        return state.withLock { $0.byChain[key] }
    }

    /// Records that `key` validated, and that `header` carries that chain.
    func insert(_ entry: Entry, for key: ChainKey, header: Substring) {
        guard capacity > 0 else { return }
        let headerKey = HeaderKey(header)
        state.withLock { state in
            if state.byChain[key] == nil {
                state.insertionOrder.append(key)
                while state.insertionOrder.count > capacity {
                    let evicted = state.insertionOrder.removeFirst()
                    state.byChain[evicted] = nil
                    for header in state.headersOfChain.removeValue(forKey: evicted) ?? [] {
                        state.byHeader[header] = nil
                    }
                }
            }
            state.byChain[key] = entry
            var headers = state.headersOfChain[key, default: []]
            if state.byHeader[headerKey] == nil {
                // Bound the header variants per chain too: a hostile sender can vary unknown header fields.
                if headers.count >= 8 {
                    state.byHeader[headers.removeFirst()] = nil
                }
                headers.append(headerKey)
            }
            state.headersOfChain[key] = headers
            state.byHeader[headerKey] = entry
        }
    }
}
