#ifndef BLEGATEWAY_CGNUTLS_SHIM_H
#define BLEGATEWAY_CGNUTLS_SHIM_H

#include <gnutls/gnutls.h>

// gnutls_transport_set_int is a macro, which Swift does not import.
static inline void blegateway_gnutls_transport_set_fd(gnutls_session_t session, int fd) {
    gnutls_transport_set_int2(session, fd, fd);
}

#endif
