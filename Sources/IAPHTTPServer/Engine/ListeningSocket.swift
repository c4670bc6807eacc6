#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// A TCP socket bound to an address and listening, handed to libmicrohttpd, which accepts on it.
///
/// The package binds it itself, so that a failure says why (`Address already in use`) and the bound port is known
/// before the first request.
struct ListeningSocket: Sendable {
    /// The descriptor.
    let descriptor: Int32
    /// The address as the server names it in URLs: `127.0.0.1`, `[::1]`.
    let urlHost: String
    /// The bound port.
    let port: UInt16

    /// Creates, binds and listens.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal (IPv6 may be in brackets), or `localhost`.
    ///   - port: The port, or 0 for one the system picks.
    ///   - backlog: The kernel's queue of connections not yet accepted.
    /// - Throws: ``IAPError`` `.invalidConfiguration` for a host that is not an address or an address that cannot
    ///   be bound, naming the system's reason.
    init(host: String, port: UInt16, backlog: Int32 = 511) throws {
        var literal = host == "localhost" ? "127.0.0.1" : host
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        if let address = Self.ipv4(literal, port: port) {
            withUnsafeMutableBytes(of: &storage) { raw in raw.storeBytes(of: address, as: sockaddr_in.self) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            family = AF_INET
            urlHost = literal
        } else if let address = Self.ipv6(literal, port: port) {
            withUnsafeMutableBytes(of: &storage) { raw in raw.storeBytes(of: address, as: sockaddr_in6.self) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            family = AF_INET6
            urlHost = "[\(literal)]"
        } else {
            throw IAPError(.invalidConfiguration, "'\(host)' is not an IPv4 or IPv6 address")
        }
        #if canImport(Darwin)
            let descriptor = socket(family, SOCK_STREAM, 0)
        #else
            let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else {
            throw IAPError(.invalidConfiguration, "cannot create a socket: \(Self.reason())")
        }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let reason = Self.reason()
            closeDescriptor(descriptor)
            throw IAPError(.invalidConfiguration, "cannot listen on \(urlHost):\(port): \(reason)")
        }
        guard listen(descriptor, backlog) == 0 else {
            let reason = Self.reason()
            closeDescriptor(descriptor)
            throw IAPError(.invalidConfiguration, "cannot listen on \(urlHost):\(port): \(reason)")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        self.descriptor = descriptor
        self.port = Self.port(of: actual)
    }

    /// Closes the descriptor (after libmicrohttpd gave it back, or when it never took it).
    func close() {
        closeDescriptor(descriptor)
    }

    /// Whether `host` is what ``init(host:port:backlog:)`` takes: an IPv4 or IPv6 literal (IPv6 may be in brackets),
    /// or `localhost`.
    static func isAddress(_ host: String) -> Bool {
        var literal = host == "localhost" ? "127.0.0.1" : host
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        return ipv4(literal, port: 0) != nil || ipv6(literal, port: 0) != nil
    }

    private static func ipv4(_ text: String, port: UInt16) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        return inet_pton(AF_INET, text, &address.sin_addr) == 1 ? address : nil
    }

    private static func ipv6(_ text: String, port: UInt16) -> sockaddr_in6? {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        return inet_pton(AF_INET6, text, &address.sin6_addr) == 1 ? address : nil
    }

    private static func port(of storage: sockaddr_storage) -> UInt16 {
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                return UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            }
            return UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The text of an IP address in a socket address, or `nil` for another family.
    static func addressText(_ address: UnsafePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var ipv4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self).sin_addr
            guard inet_ntop(AF_INET, &ipv4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        case AF_INET6:
            var ipv6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self).sin6_addr
            guard inet_ntop(AF_INET6, &ipv6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func reason() -> String {
        String(cString: strerror(errno))
    }
}
