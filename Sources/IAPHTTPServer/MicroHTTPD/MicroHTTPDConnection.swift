import CIAPMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A libmicrohttpd connection as the engine controls it.
///
/// `@unchecked Sendable`: the pointer is only handed back to libmicrohttpd, under the engine's rules
/// (``ConnectionControl``), while the connection exists.
struct MicroHTTPDConnection: ConnectionControl, @unchecked Sendable {
    let pointer: OpaquePointer
    let socket: Int32

    func suspend() {
        MHD_suspend_connection(pointer)
    }

    func resume() {
        MHD_resume_connection(pointer)
    }

    func abort() {
        // The library still owns the descriptor (the engine forgets the connection before it is closed): shutting
        // it down makes the next read fail, and the library closes it on its own thread.
        _ = shutdown(socket, Int32(SHUT_RDWR))
    }

    func answerDirectly(_ bytes: [UInt8]) -> Bool {
        // libmicrohttpd writes nothing while it reads a body: the answer cannot interleave with its own. The socket
        // is non-blocking; an answer this small fits the empty send buffer of a connection whose body is arriving.
        let sent = bytes.withUnsafeBytes { buffer in
            send(socket, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
        _ = shutdown(socket, Int32(SHUT_WR))
        return sent == bytes.count
    }
}
