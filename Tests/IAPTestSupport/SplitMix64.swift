/// A small deterministic random number generator, so that a failing mutation or random case can be replayed from
/// its seed.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// `bytes` after one to three random edits (a byte replaced, removed or inserted), the new bytes drawn from
    /// `alphabet`: how the fast decoders' tests make input near the shapes they accept.
    package mutating func mutate(_ bytes: [UInt8], alphabet: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for _ in 0...(next() % 3) where !bytes.isEmpty {
            let position = Int(next() % UInt64(bytes.count))
            switch next() % 3 {
            case 0: bytes[position] = alphabet[Int(next() % UInt64(alphabet.count))]
            case 1: bytes.remove(at: position)
            default: bytes.insert(alphabet[Int(next() % UInt64(alphabet.count))], at: position)
            }
        }
        return bytes
    }
}
