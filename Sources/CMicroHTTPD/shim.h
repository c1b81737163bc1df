// The libmicrohttpd surface the HTTPServer module uses.
//
// microhttpd.h needs these system headers first. MHD_start_daemon,
// MHD_get_connection_info and MHD_get_daemon_info are variadic, which Swift
// cannot call, so the wrappers below call them with fixed arguments. The
// reader sentinels are casts the importer skips. MHD's logger receives a
// va_list; the trampoline formats it here so Swift only sees a plain string.
#ifndef BLEGATEWAY_CMICROHTTPD_SHIM_H
#define BLEGATEWAY_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <malloc.h>
#include <poll.h>
#include <microhttpd.h>

/// poll(2)'s "peer closed its end" event; Linux's value (POLLRDHUP is only
/// declared under _GNU_SOURCE).
static const short CMHD_POLLRDHUP = 0x2000;

/// Returns the free memory of malloc's heaps to the system (glibc's
/// malloc_trim, which <malloc.h> declares and Glibc's module does not).
static inline int cmhd_malloc_trim(void) { return malloc_trim(0); }

/// A non-blocking, close-on-exec eventfd, or -1.
static inline int cmhd_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

static const ssize_t CMHD_CONTENT_READER_END_OF_STREAM = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t CMHD_CONTENT_READER_END_WITH_ERROR = MHD_CONTENT_READER_END_WITH_ERROR;
static const uint64_t CMHD_SIZE_UNKNOWN = MHD_SIZE_UNKNOWN;

/// MHD_start_daemon with every option in one MHD_OPTION_ARRAY
/// (terminated by an MHD_OPTION_END entry).
static inline struct MHD_Daemon *cmhd_start_daemon(
    unsigned int flags, uint16_t port,
    MHD_AcceptPolicyCallback apc, void *apc_cls,
    MHD_AccessHandlerCallback dh, void *dh_cls,
    struct MHD_OptionItem *options) {
  return MHD_start_daemon(flags, port, apc, apc_cls, dh, dh_cls,
                          MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

// MARK: Option items

/// An option whose argument is an integer (limits, timeouts, sizes).
static inline struct MHD_OptionItem cmhd_option_value(enum MHD_OPTION option, intptr_t value) {
  struct MHD_OptionItem item = { option, value, NULL };
  return item;
}

/// An option whose argument is one pointer (socket address, PEM strings).
static inline struct MHD_OptionItem cmhd_option_pointer(enum MHD_OPTION option, void *pointer) {
  struct MHD_OptionItem item = { option, 0, pointer };
  return item;
}

/// MHD_OPTION_NOTIFY_COMPLETED: in an option array the callback goes in
/// `value` and its closure argument in `ptr_value`.
static inline struct MHD_OptionItem cmhd_option_notify_completed(
    MHD_RequestCompletedCallback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, cls };
  return item;
}

/// MHD_OPTION_NOTIFY_CONNECTION: told when a connection starts and before
/// its socket is closed.
static inline struct MHD_OptionItem cmhd_option_notify_connection(
    MHD_NotifyConnectionCallback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)callback, cls };
  return item;
}

typedef void *(*cmhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// MHD_OPTION_URI_LOG_CALLBACK: sees the request target before MHD
/// unescapes it; what it returns becomes the request's context pointer.
static inline struct MHD_OptionItem cmhd_option_uri_log(cmhd_uri_log_callback callback, void *cls) {
  struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls };
  return item;
}

// MARK: Logging

typedef void (*cmhd_log_sink)(void *cls, const char *message);

/// Where MHD's log lines go; must outlive the daemon.
struct cmhd_logger {
  cmhd_log_sink sink;
  void *cls;
};

static inline void cmhd_log_trampoline(void *cls, const char *format, va_list arguments) {
  struct cmhd_logger *logger = (struct cmhd_logger *)cls;
  char line[1024];
  vsnprintf(line, sizeof line, format, arguments);
  logger->sink(logger->cls, line);
}

/// MHD_OPTION_EXTERNAL_LOGGER routed through `cmhd_log_trampoline`.
static inline struct MHD_OptionItem cmhd_option_logger(struct cmhd_logger *logger) {
  struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)&cmhd_log_trampoline, logger };
  return item;
}

// MARK: Information queries (variadic in microhttpd.h)

/// The port the daemon is bound to (useful after binding port 0).
static inline uint16_t cmhd_daemon_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

/// The peer's address, or NULL.
static inline const struct sockaddr *cmhd_connection_client_address(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info == NULL ? NULL : info->client_addr;
}

/// The connection's socket, or -1.
static inline int cmhd_connection_socket(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == NULL ? -1 : info->connect_fd;
}

/// Size of the request line plus headers, in bytes (0 when unknown).
static inline size_t cmhd_connection_header_size(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info == NULL ? 0 : info->header_size;
}

#endif
