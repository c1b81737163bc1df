// The libmosquitto surface the MQTT module uses, loaded at run time.
//
// The gateway does not link libmosquitto: `cmosq_load` opens it with
// dlopen the first time an MQTT client is made, so that a gateway started
// without --mqtt neither maps libmosquitto nor the TLS libraries it links
// (libssl, libcrypto: 1.7 MiB resident and some 4,000 symbols bound at
// load, BIND_NOW). Every function below is `cmosq_NAME`, a call of
// libmosquitto's `mosquitto_NAME` through the pointer `cmosq_load` found;
// the types and constants still come from <mosquitto.h>.
//
// MQTT_PROTOCOL_V311 / MQTT_PROTOCOL_V5 and the MOSQ_ERR_* / MQTT_PROP_* /
// MOSQ_OPT_* enumerators are re-exported as plain ints, so that Swift code
// compares them with the ints libmosquitto returns without casts at every
// call site.
#ifndef BLEGATEWAY_CMOSQUITTO_H
#define BLEGATEWAY_CMOSQUITTO_H

#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <poll.h>
#include <stddef.h>
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

/// The file dlopen is given: the run-time library's soname, which Debian's
/// libmosquitto1 installs (the development package's unversioned
/// libmosquitto.so is not there at run time).
#define CMOSQ_LIBRARY_NAME "libmosquitto.so.1"

/// Opens libmosquitto and finds every function below, once (the first
/// call does the work; later calls return its outcome). Returns 0 on
/// success; otherwise -1, with what went wrong (dlerror's text: the file
/// that is missing, or the function it lacks) copied into `error`.
int cmosq_load(char *error, size_t error_size);

/// The libmosquitto functions the MQTT module calls: each `cmosq_NAME`
/// calls `mosquitto_NAME`. Calling one before `cmosq_load` succeeded is a
/// programming error: it prints why and aborts.
int cmosq_lib_init(void);
struct mosquitto *cmosq_new(const char *id, bool clean_session, void *obj);
void cmosq_destroy(struct mosquitto *mosq);
void cmosq_user_data_set(struct mosquitto *mosq, void *obj);
int cmosq_threaded_set(struct mosquitto *mosq, bool threaded);
/// mosquitto_int_option with the option as an int (the enum does not
/// convert implicitly from Swift).
int cmosq_int_option(struct mosquitto *mosq, int option, int value);
int cmosq_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int cmosq_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                  const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
int cmosq_will_set_v5(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos,
                      bool retain, mosquitto_property *properties);
int cmosq_connect_bind_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,
                          const char *bind_address, const mosquitto_property *properties);
int cmosq_disconnect_v5(struct mosquitto *mosq, int reason_code, const mosquitto_property *properties);
int cmosq_socket(struct mosquitto *mosq);
bool cmosq_want_write(struct mosquitto *mosq);
int cmosq_loop_read(struct mosquitto *mosq, int max_packets);
int cmosq_loop_write(struct mosquitto *mosq, int max_packets);
int cmosq_loop_misc(struct mosquitto *mosq);
int cmosq_publish_v5(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload,
                     int qos, bool retain, const mosquitto_property *properties);
int cmosq_subscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, int qos, int options,
                       const mosquitto_property *properties);
int cmosq_unsubscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, const mosquitto_property *properties);
void cmosq_connect_v5_callback_set(struct mosquitto *mosq,
                                   void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *));
void cmosq_disconnect_v5_callback_set(struct mosquitto *mosq,
                                      void (*on_disconnect)(struct mosquitto *, void *, int, const mosquitto_property *));
void cmosq_publish_v5_callback_set(struct mosquitto *mosq,
                                   void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *));
void cmosq_message_v5_callback_set(
    struct mosquitto *mosq,
    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *));
void cmosq_subscribe_v5_callback_set(
    struct mosquitto *mosq, void (*on_subscribe)(struct mosquitto *, void *, int, int, const int *, const mosquitto_property *));
int cmosq_pub_topic_check(const char *topic);
int cmosq_sub_topic_check(const char *topic);
int cmosq_topic_matches_sub(const char *sub, const char *topic, bool *result);
const char *cmosq_strerror(int mosq_errno);
const char *cmosq_connack_string(int connack_code);
const char *cmosq_reason_string(int reason_code);
int cmosq_property_add_binary(mosquitto_property **proplist, int identifier, const void *value, uint16_t len);
int cmosq_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value);
int cmosq_property_add_string(mosquitto_property **proplist, int identifier, const char *value);
int cmosq_property_add_string_pair(mosquitto_property **proplist, int identifier, const char *name, const char *value);
int cmosq_property_add_varint(mosquitto_property **proplist, int identifier, uint32_t value);
void cmosq_property_free_all(mosquitto_property **properties);
const mosquitto_property *cmosq_property_read_binary(const mosquitto_property *proplist, int identifier, void **value,
                                                     uint16_t *len, bool skip_first);
const mosquitto_property *cmosq_property_read_byte(const mosquitto_property *proplist, int identifier, uint8_t *value,
                                                   bool skip_first);
const mosquitto_property *cmosq_property_read_int32(const mosquitto_property *proplist, int identifier,
                                                    uint32_t *value, bool skip_first);
const mosquitto_property *cmosq_property_read_string(const mosquitto_property *proplist, int identifier,
                                                     char **value, bool skip_first);
const mosquitto_property *cmosq_property_read_string_pair(const mosquitto_property *proplist, int identifier,
                                                          char **name, char **value, bool skip_first);
const mosquitto_property *cmosq_property_read_varint(const mosquitto_property *proplist, int identifier,
                                                     uint32_t *value, bool skip_first);

/// A non-blocking, close-on-exec eventfd (the loop thread's wake-up for
/// stop requests while it waits between reconnects), or -1.
static inline int cmosq_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Names the calling thread (at most 15 characters are kept).
static inline void cmosq_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#endif
