#ifndef CIAPMICROHTTPD_SHIM_H
#define CIAPMICROHTTPD_SHIM_H

// GNU libmicrohttpd, the HTTP/1.1 server under IAPHTTPServer; only files in IAPHTTPServer/MicroHTTPD/ import it.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Swift cannot call C functions that take variable arguments. MHD_start_daemon, MHD_get_connection_info and
// MHD_set_connection_option do; these wrappers give the few calls the package makes fixed signatures.

/// What ciap_mhd_start_daemon passes to MHD_start_daemon. A zero count or limit leaves libmicrohttpd's default.
struct ciap_mhd_settings {
    unsigned int flags;
    /// An already bound and listening socket; libmicrohttpd accepts on it.
    int listen_socket;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    size_t connection_memory_limit;
    unsigned int connection_timeout_seconds;
    unsigned int thread_pool_size;
    MHD_AccessHandlerCallback access_handler;
    MHD_RequestCompletedCallback request_completed;
    MHD_NotifyConnectionCallback notify_connection;
    void *(*uri_log)(void *context, const char *uri, struct MHD_Connection *connection);
    void *context;
};

static inline struct MHD_Daemon *ciap_mhd_start_daemon(const struct ciap_mhd_settings *s) {
    struct MHD_OptionItem options[10];
    unsigned int count = 0;
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, (intptr_t)s->listen_socket, NULL};
    if (s->connection_limit > 0)
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->connection_limit, NULL};
    if (s->per_ip_connection_limit > 0)
        options[count++] =
            (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)s->per_ip_connection_limit, NULL};
    if (s->connection_memory_limit > 0)
        options[count++] =
            (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL};
    if (s->connection_timeout_seconds > 0)
        options[count++] =
            (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->connection_timeout_seconds, NULL};
    if (s->thread_pool_size > 1)
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->thread_pool_size, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(s->flags, 0, NULL, NULL, s->access_handler, s->context,
                            MHD_OPTION_NOTIFY_COMPLETED, s->request_completed, s->context,
                            MHD_OPTION_NOTIFY_CONNECTION, s->notify_connection, s->context,
                            MHD_OPTION_URI_LOG_CALLBACK, s->uri_log, s->context,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/// The socket of a connection, or -1.
static inline int ciap_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/// The context the connection notification callback stored for a connection, or NULL.
static inline void *ciap_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// The client's address, or NULL.
static inline const struct sockaddr *ciap_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#endif
