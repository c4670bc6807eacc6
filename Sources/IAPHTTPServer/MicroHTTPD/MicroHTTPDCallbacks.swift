import CIAPMicroHTTPD

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The functions libmicrohttpd calls, as `@convention(c)` values.
///
/// Each receives the ``ServerCore`` as its context (retained by ``MicroHTTPDDaemon``) and keeps its own state in
/// the slots libmicrohttpd offers: a ``ConnectionContext`` in the connection's socket context, a
/// ``RequestContext`` in the request's context, each retained while libmicrohttpd holds it and released when it
/// says it is done. None of them throws or traps; a missing pointer is answered `MHD_NO` (close the connection).
enum MicroHTTPDCallbacks {
    /// `MHD_NotifyConnectionCallback`: a connection was accepted, or is about to be closed.
    static let connection: MHD_NotifyConnectionCallback = { context, connection, socketContext, code in
        guard let context, let connection, let socketContext else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        switch code {
        case .CONNECTION_NOTIFY_STARTED:
            let control = MicroHTTPDConnection(pointer: connection, socket: ciap_mhd_connection_socket(connection))
            let remote = ciap_mhd_client_address(connection).flatMap { ListeningSocket.addressText($0) }
            let tracked = core.connectionOpened(control: control, remoteAddress: remote)
            socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
        case .CONNECTION_NOTIFY_CLOSED:
            guard let stored = socketContext.pointee else { return }
            socketContext.pointee = nil
            let tracked = Unmanaged<ConnectionContext>.fromOpaque(stored)
            core.connectionClosed(tracked.takeUnretainedValue())
            tracked.release()
        @unknown default:
            return
        }
    }

    /// `MHD_OPTION_URI_LOG_CALLBACK`: a request line arrived; what it returns becomes the request's context.
    static let requestLine:
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) ->
            UnsafeMutableRawPointer? = { context, target, connection in
                guard let context, let connection, let stored = ciap_mhd_socket_context(connection) else { return nil }
                let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
                let tracked = Unmanaged<ConnectionContext>.fromOpaque(stored).takeUnretainedValue()
                let text = target.map { String(cString: $0) } ?? ""
                let request = core.requestStarted(on: tracked, target: text)
                return Unmanaged.passRetained(request).toOpaque()
            }

    /// `MHD_RequestCompletedCallback`: the request is over (answered, or its connection closed).
    static let completed: MHD_RequestCompletedCallback = { context, _, requestContext, _ in
        guard let context, let requestContext, let stored = requestContext.pointee else { return }
        requestContext.pointee = nil
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        let request = Unmanaged<RequestContext>.fromOpaque(stored)
        core.requestFinished(request.takeUnretainedValue())
        request.release()
    }

    /// `MHD_AccessHandlerCallback`: called once the head is complete, once per piece of the body, and once (or again
    /// after a resume) when the request is complete.
    static let access: MHD_AccessHandlerCallback = {
        context,
        connection,
        _,
        method,
        version,
        upload,
        uploadSize,
        requestContext in
        guard let context, let connection, let requestContext, let stored = requestContext.pointee else {
            return MHD_Result.NO
        }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        let request = Unmanaged<RequestContext>.fromOpaque(stored).takeUnretainedValue()
        let decision: ServerCore.Decision
        if !request.headSeen {
            decision = core.headReceived(
                request,
                method: method.map { String(cString: $0) } ?? "",
                version: version.map { String(cString: $0) } ?? "",
                headers: headers(of: connection)
            )
        } else if let uploadSize, uploadSize.pointee > 0 {
            let bytes = UnsafeRawBufferPointer(start: upload, count: upload == nil ? 0 : uploadSize.pointee)
            decision = core.bodyReceived(request, bytes)
            uploadSize.pointee = 0
        } else {
            decision = core.requestReceived(request)
        }
        switch decision {
        case .proceed, .wait:
            return MHD_Result.YES
        case .abort:
            return MHD_Result.NO
        case .respond(let response, let close):
            return queue(response, close: close, on: connection)
        }
    }

    /// The request's header fields, in order.
    private static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        withUnsafeMutablePointer(to: &fields) { pointer in
            _ = MHD_get_connection_values_n(
                connection,
                .HEADER_KIND,
                { context, _, name, nameLength, value, valueLength in
                    guard let context else { return MHD_Result.NO }
                    let fields = context.assumingMemoryBound(to: [HTTPHeaders.Field].self)
                    fields.pointee.append(
                        HTTPHeaders.Field(
                            name: MicroHTTPDCallbacks.text(name, nameLength),
                            value: MicroHTTPDCallbacks.text(value, valueLength)
                        )
                    )
                    return MHD_Result.YES
                },
                pointer
            )
        }
        return HTTPHeaders(fields)
    }

    private static func text(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// Queues an answer on the connection; libmicrohttpd adds `Content-Length` and `Date`.
    private static func queue(_ response: HTTPServerResponse, close: Bool, on connection: OpaquePointer) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count,
                UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                .RESPMEM_MUST_COPY
            )
        }
        guard let created else { return MHD_Result.NO }
        defer { MHD_destroy_response(created) }
        for field in response.headers {
            switch field.name.lowercased() {
            case "content-length", "transfer-encoding", "date", "connection":
                continue
            default:
                // Checked by ServerCore.problem(of:) before it got here; a refusal still closes the connection.
                guard MHD_add_response_header(created, field.name, field.value) == MHD_Result.YES else {
                    return MHD_Result.NO
                }
            }
        }
        if close {
            _ = MHD_add_response_header(created, "Connection", "close")
        }
        return MHD_queue_response(connection, UInt32(response.status), created)
    }
}
