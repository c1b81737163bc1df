// The libmicrohttpd surface the HTTPServer module uses.
//
// microhttpd.h needs these system headers first. MHD_start_daemon is
// variadic, which Swift cannot call, so cmhd_start_daemon passes every option
// through MHD_OPTION_ARRAY. The reader sentinels are casts the importer skips.
#ifndef BLEGATEWAY_CMICROHTTPD_SHIM_H
#define BLEGATEWAY_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

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

#endif
