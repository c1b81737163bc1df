// The libmosquitto surface the MQTT module uses.
//
// MQTT_PROTOCOL_V311 / MQTT_PROTOCOL_V5 and the MOSQ_ERR_* / MQTT_PROP_* /
// MOSQ_OPT_* enumerators are re-exported as plain ints, so that Swift code
// compares them with the ints libmosquitto returns without casts at every
// call site.
#ifndef BLEGATEWAY_CMOSQUITTO_SHIM_H
#define BLEGATEWAY_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

static const int CMOSQ_PROTOCOL_V311 = MQTT_PROTOCOL_V311;
static const int CMOSQ_PROTOCOL_V5 = MQTT_PROTOCOL_V5;

static const int CMOSQ_ERR_SUCCESS = MOSQ_ERR_SUCCESS;
static const int CMOSQ_ERR_NO_CONN = MOSQ_ERR_NO_CONN;
static const int CMOSQ_ERR_CONN_LOST = MOSQ_ERR_CONN_LOST;
static const int CMOSQ_ERR_INVAL = MOSQ_ERR_INVAL;
static const int CMOSQ_ERR_ERRNO = MOSQ_ERR_ERRNO;

static const int CMOSQ_OPT_PROTOCOL_VERSION = MOSQ_OPT_PROTOCOL_VERSION;
static const int CMOSQ_OPT_SEND_MAXIMUM = MOSQ_OPT_SEND_MAXIMUM;
static const int CMOSQ_OPT_TCP_NODELAY = MOSQ_OPT_TCP_NODELAY;

static const int CMOSQ_PROP_PAYLOAD_FORMAT_INDICATOR = MQTT_PROP_PAYLOAD_FORMAT_INDICATOR;
static const int CMOSQ_PROP_MESSAGE_EXPIRY_INTERVAL = MQTT_PROP_MESSAGE_EXPIRY_INTERVAL;
static const int CMOSQ_PROP_CONTENT_TYPE = MQTT_PROP_CONTENT_TYPE;
static const int CMOSQ_PROP_RESPONSE_TOPIC = MQTT_PROP_RESPONSE_TOPIC;
static const int CMOSQ_PROP_CORRELATION_DATA = MQTT_PROP_CORRELATION_DATA;
static const int CMOSQ_PROP_USER_PROPERTY = MQTT_PROP_USER_PROPERTY;
static const int CMOSQ_PROP_SESSION_EXPIRY_INTERVAL = MQTT_PROP_SESSION_EXPIRY_INTERVAL;
static const int CMOSQ_PROP_MAXIMUM_PACKET_SIZE = MQTT_PROP_MAXIMUM_PACKET_SIZE;
static const int CMOSQ_PROP_SUBSCRIPTION_IDENTIFIER = MQTT_PROP_SUBSCRIPTION_IDENTIFIER;
static const int CMOSQ_PROP_SUBSCRIPTION_ID_AVAILABLE = MQTT_PROP_SUBSCRIPTION_ID_AVAILABLE;

/// mosquitto_int_option with the option as an int (the enum does not
/// convert implicitly from Swift).
static inline int cmosq_int_option(struct mosquitto *mosq, int option, int value) {
  return mosquitto_int_option(mosq, (enum mosq_opt_t)option, value);
}

/// A non-blocking, close-on-exec eventfd (the loop thread's wake-up for
/// stop requests while it waits between reconnects), or -1.
static inline int cmosq_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Names the calling thread (at most 15 characters are kept).
static inline void cmosq_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#endif
