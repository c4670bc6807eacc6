/// SHA-256 (FIPS 180-4) in Swift, for the targets that must not link OpenSSL.
///
/// The support audit chains its entries by SHA-256, and the chain is written and checked by targets an app may
/// link (`IAPServerAPI`, `IAPInMemory`), which reach no C module. The amounts hashed are small (an audit entry is
/// a few hundred bytes), so a plain implementation is enough; `IAPCrypto` keeps OpenSSL's for the verifier. The
/// tests check it against NIST's vectors and against OpenSSL on random inputs.
package struct SHA256 {
    /// The length of a digest in bytes.
    package static let byteCount = 32

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// Bytes waiting for a full 64-byte block.
    private var pending: [UInt8] = []
    /// Bytes hashed so far.
    private var length: UInt64 = 0

    /// Starts a digest.
    package init() {
        pending.reserveCapacity(64)
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var digest = SHA256()
        digest.update(bytes)
        return digest.finalize()
    }

    /// The digest of `bytes` as lowercase hexadecimal text (64 characters).
    package static func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
        Hex.encode(hash(bytes))
    }

    /// Adds bytes to the digest.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        guard done == nil else { return }
        for byte in bytes {
            pending.append(byte)
            if pending.count == 64 {
                compressPending()
            }
        }
    }

    /// Adds contiguous bytes: whole blocks straight from the buffer, the rest through ``pending``.
    private mutating func update(_ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, buffer.count)
            pending += buffer[0..<taken]
            offset = taken
            if pending.count == 64 {
                compressPending()
            }
        }
        while buffer.count - offset >= 64 {
            length &+= 64
            Self.compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]), into: &state)
            offset += 64
        }
        pending += buffer[offset...]
    }

    private mutating func compressPending() {
        length &+= 64
        pending.withUnsafeBytes { Self.compress($0, into: &state) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Pads, finishes and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bits = (length &+ UInt64(pending.count)) &* 8
        pending.append(0x80)
        if pending.count > 56 {
            pending += [UInt8](repeating: 0, count: 64 - pending.count)
            compressPending()
        }
        pending += [UInt8](repeating: 0, count: 56 - pending.count)
        for shift in stride(from: 56, through: 0, by: -8) {
            pending.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        compressPending()
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.byteCount)
        for word in state {
            digest += [
                UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ]
        }
        return digest
    }

    private static func rotate(_ word: UInt32, _ count: UInt32) -> UInt32 {
        (word >> count) | (word << (32 - count))
    }

    /// Runs the compression function on one 64-byte block.
    private static func compress(_ block: UnsafeRawBufferPointer, into state: inout [UInt32]) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            compress(block, schedule: schedule, into: &state)
        }
    }

    private static func compress(
        _ block: UnsafeRawBufferPointer,
        schedule: UnsafeMutableBufferPointer<UInt32>,
        into state: inout [UInt32]
    ) {
        for index in 0..<16 {
            schedule[index] =
                UInt32(block[index * 4]) << 24 | UInt32(block[index * 4 + 1]) << 16
                | UInt32(block[index * 4 + 2]) << 8 | UInt32(block[index * 4 + 3])
        }
        for index in 16..<64 {
            let early = schedule[index - 15]
            let late = schedule[index - 2]
            let sigma0 = rotate(early, 7) ^ rotate(early, 18) ^ (early >> 3)
            let sigma1 = rotate(late, 17) ^ rotate(late, 19) ^ (late >> 10)
            schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        for index in 0..<64 {
            let sum1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temporary1 = h &+ sum1 &+ choice &+ roundConstants[index] &+ schedule[index]
            let sum0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temporary2 = sum0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temporary1
            d = c
            c = b
            b = a
            a = temporary1 &+ temporary2
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
        state[5] &+= f
        state[6] &+= g
        state[7] &+= h
    }
}
