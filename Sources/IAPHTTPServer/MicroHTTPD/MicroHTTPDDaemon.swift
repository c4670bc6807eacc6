import CIAPMicroHTTPD
import IAPCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A running libmicrohttpd daemon that feeds a ``ServerCore``.
///
/// The daemon polls its connections on internal threads (`epoll` on Linux, chosen by `MHD_USE_AUTO`), a thread pool
/// of ``HTTPServer/Configuration/ioThreads``. A complete request is handed to the core, which suspends the
/// connection (`MHD_suspend_connection`) and runs the handler as a Swift task; the task's answer resumes it
/// (`MHD_resume_connection`) and is queued on the daemon's thread. No handler ever blocks a polling thread, and a
/// slow client costs a socket and its memory pool, not a thread.
///
/// The callbacks are `@convention(c)` functions that receive the core as an unretained pointer (retained here until
/// the daemon has stopped), and never throw or trap: whatever the client sent, they return to C.
final class MicroHTTPDDaemon: Sendable {
    private struct State {
        var quiesced = false
        var stopped = false
    }

    /// `MHD_Daemon *`, wrapped to cross threads; used only under ``state``'s lock.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let handle: Handle
    private let socket: ListeningSocket
    private let core: Unmanaged<ServerCore>
    private let state = LockedValue(State())

    /// Starts a daemon that accepts on `socket`.
    ///
    /// - Throws: ``IAPError`` `.invalidConfiguration` when libmicrohttpd refuses to start.
    init(socket: ListeningSocket, core: ServerCore) throws {
        let configuration = core.configuration
        let retained = Unmanaged.passRetained(core)
        var settings = ciap_mhd_settings()
        settings.flags =
            UInt32(MHD_USE_AUTO_INTERNAL_THREAD.rawValue) | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        settings.listen_socket = socket.descriptor
        settings.connection_limit = UInt32(configuration.acceptedConnections)
        settings.per_ip_connection_limit = UInt32(configuration.maximumConnectionsPerAddress ?? 0)
        settings.connection_memory_limit = configuration.connectionMemoryLimit
        settings.connection_timeout_seconds = UInt32(configuration.idleTimeoutSeconds)
        settings.thread_pool_size = UInt32(configuration.ioThreads)
        settings.access_handler = MicroHTTPDCallbacks.access
        settings.request_completed = MicroHTTPDCallbacks.completed
        settings.notify_connection = MicroHTTPDCallbacks.connection
        settings.uri_log = MicroHTTPDCallbacks.requestLine
        settings.context = retained.toOpaque()
        guard let daemon = ciap_mhd_start_daemon(&settings) else {
            retained.release()
            throw IAPError(.invalidConfiguration, "libmicrohttpd did not start a daemon on the socket")
        }
        self.handle = Handle(pointer: daemon)
        self.socket = socket
        self.core = retained
    }

    /// Stops accepting connections (`MHD_quiesce_daemon`) and closes the listening socket; the connections already
    /// accepted go on.
    func quiesce() {
        state.withLock { state in
            guard !state.quiesced, !state.stopped else { return }
            state.quiesced = true
            if MHD_quiesce_daemon(handle.pointer) >= 0 {
                socket.close()
            }
        }
    }

    /// Stops the daemon: closes every connection and joins its threads. Call ``ServerCore/forceStop()`` first, so
    /// that no connection is left suspended.
    func stop() {
        let stop = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard stop else { return }
        MHD_stop_daemon(handle.pointer)
        core.release()
    }
}
