// Loads libmosquitto with dlopen and forwards each cmosq_NAME to its
// mosquitto_NAME (see CMosquitto.h for why it is not linked).
//
// The pointers are typed with __typeof__ of <mosquitto.h>'s own
// declarations, so a forwarding call that does not match the library's
// prototype does not compile.
#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMOSQ_FUNCTIONS(X)                                                                                             \
  X(lib_init)                                                                                                          \
  X(new)                                                                                                               \
  X(destroy)                                                                                                           \
  X(user_data_set)                                                                                                     \
  X(threaded_set)                                                                                                      \
  X(int_option)                                                                                                        \
  X(username_pw_set)                                                                                                   \
  X(tls_set)                                                                                                           \
  X(will_set_v5)                                                                                                       \
  X(connect_bind_v5)                                                                                                   \
  X(disconnect_v5)                                                                                                     \
  X(socket)                                                                                                            \
  X(want_write)                                                                                                        \
  X(loop_read)                                                                                                         \
  X(loop_write)                                                                                                        \
  X(loop_misc)                                                                                                         \
  X(publish_v5)                                                                                                        \
  X(subscribe_v5)                                                                                                      \
  X(unsubscribe_v5)                                                                                                    \
  X(connect_v5_callback_set)                                                                                           \
  X(disconnect_v5_callback_set)                                                                                        \
  X(publish_v5_callback_set)                                                                                           \
  X(message_v5_callback_set)                                                                                           \
  X(subscribe_v5_callback_set)                                                                                         \
  X(pub_topic_check)                                                                                                   \
  X(sub_topic_check)                                                                                                   \
  X(topic_matches_sub)                                                                                                 \
  X(strerror)                                                                                                          \
  X(connack_string)                                                                                                    \
  X(reason_string)                                                                                                     \
  X(property_add_binary)                                                                                               \
  X(property_add_int32)                                                                                                \
  X(property_add_string)                                                                                               \
  X(property_add_string_pair)                                                                                          \
  X(property_add_varint)                                                                                               \
  X(property_free_all)                                                                                                 \
  X(property_read_binary)                                                                                              \
  X(property_read_byte)                                                                                                \
  X(property_read_int32)                                                                                               \
  X(property_read_string)                                                                                              \
  X(property_read_string_pair)                                                                                         \
  X(property_read_varint)

/// The functions found, written once by `load` (under pthread_once) and
/// only read afterwards.
static struct {
#define CMOSQ_POINTER(name) __typeof__(mosquitto_##name) *name;
  CMOSQ_FUNCTIONS(CMOSQ_POINTER)
#undef CMOSQ_POINTER
} library;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_error[512] = "libmosquitto was not loaded";

static void load(void) {
  // RTLD_LOCAL: its symbols serve these pointers only, never another
  // library's lookups. RTLD_NOW: a missing function is reported here,
  // not as a crash at its first call.
  void *handle = dlopen(CMOSQ_LIBRARY_NAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    snprintf(load_error, sizeof load_error, "%s", reason != NULL ? reason : "cannot open " CMOSQ_LIBRARY_NAME);
    return;
  }
  // dlsym returns void *; POSIX guarantees it converts to a function
  // pointer, which ISO C alone does not say (hence the memcpy).
#define CMOSQ_FIND(name)                                                                                               \
  {                                                                                                                    \
    void *symbol = dlsym(handle, "mosquitto_" #name);                                                                  \
    if (symbol == NULL) {                                                                                              \
      snprintf(load_error, sizeof load_error, "%s has no mosquitto_" #name, CMOSQ_LIBRARY_NAME);                       \
      dlclose(handle);                                                                                                 \
      memset(&library, 0, sizeof library);                                                                             \
      return;                                                                                                          \
    }                                                                                                                  \
    memcpy(&library.name, &symbol, sizeof symbol);                                                                     \
  }
  CMOSQ_FUNCTIONS(CMOSQ_FIND)
#undef CMOSQ_FIND
  // The handle stays open for the life of the process: libmosquitto's
  // threads and the clients' handles may outlive any one caller.
  load_status = 0;
}

int cmosq_load(char *error, size_t error_size) {
  pthread_once(&load_once, load);
  if (load_status != 0 && error != NULL && error_size > 0) snprintf(error, error_size, "%s", load_error);
  return load_status;
}

/// The pointer to call, or an abort that says which function was called
/// too early: every caller in the MQTT module loads the library first.
#define CMOSQ_REQUIRE(name)                                                                                            \
  (library.name != NULL ? library.name                                                                                 \
                        : (fprintf(stderr, "cmosq_" #name " called before libmosquitto was loaded\n"), abort(),        \
                           library.name))

int cmosq_lib_init(void) { return CMOSQ_REQUIRE(lib_init)(); }
struct mosquitto *cmosq_new(const char *id, bool clean_session, void *obj) {
  return CMOSQ_REQUIRE(new)(id, clean_session, obj);
}
void cmosq_destroy(struct mosquitto *mosq) { CMOSQ_REQUIRE(destroy)(mosq); }
void cmosq_user_data_set(struct mosquitto *mosq, void *obj) { CMOSQ_REQUIRE(user_data_set)(mosq, obj); }
int cmosq_threaded_set(struct mosquitto *mosq, bool threaded) { return CMOSQ_REQUIRE(threaded_set)(mosq, threaded); }
int cmosq_int_option(struct mosquitto *mosq, int option, int value) {
  return CMOSQ_REQUIRE(int_option)(mosq, (enum mosq_opt_t)option, value);
}
int cmosq_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
  return CMOSQ_REQUIRE(username_pw_set)(mosq, username, password);
}
int cmosq_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                  const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
  return CMOSQ_REQUIRE(tls_set)(mosq, cafile, capath, certfile, keyfile, pw_callback);
}
int cmosq_will_set_v5(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos,
                      bool retain, mosquitto_property *properties) {
  return CMOSQ_REQUIRE(will_set_v5)(mosq, topic, payloadlen, payload, qos, retain, properties);
}
int cmosq_connect_bind_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,
                          const char *bind_address, const mosquitto_property *properties) {
  return CMOSQ_REQUIRE(connect_bind_v5)(mosq, host, port, keepalive, bind_address, properties);
}
int cmosq_disconnect_v5(struct mosquitto *mosq, int reason_code, const mosquitto_property *properties) {
  return CMOSQ_REQUIRE(disconnect_v5)(mosq, reason_code, properties);
}
int cmosq_socket(struct mosquitto *mosq) { return CMOSQ_REQUIRE(socket)(mosq); }
bool cmosq_want_write(struct mosquitto *mosq) { return CMOSQ_REQUIRE(want_write)(mosq); }
int cmosq_loop_read(struct mosquitto *mosq, int max_packets) { return CMOSQ_REQUIRE(loop_read)(mosq, max_packets); }
int cmosq_loop_write(struct mosquitto *mosq, int max_packets) { return CMOSQ_REQUIRE(loop_write)(mosq, max_packets); }
int cmosq_loop_misc(struct mosquitto *mosq) { return CMOSQ_REQUIRE(loop_misc)(mosq); }
int cmosq_publish_v5(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload,
                     int qos, bool retain, const mosquitto_property *properties) {
  return CMOSQ_REQUIRE(publish_v5)(mosq, mid, topic, payloadlen, payload, qos, retain, properties);
}
int cmosq_subscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, int qos, int options,
                       const mosquitto_property *properties) {
  return CMOSQ_REQUIRE(subscribe_v5)(mosq, mid, sub, qos, options, properties);
}
int cmosq_unsubscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, const mosquitto_property *properties) {
  return CMOSQ_REQUIRE(unsubscribe_v5)(mosq, mid, sub, properties);
}
void cmosq_connect_v5_callback_set(struct mosquitto *mosq,
                                   void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *)) {
  CMOSQ_REQUIRE(connect_v5_callback_set)(mosq, on_connect);
}
void cmosq_disconnect_v5_callback_set(
    struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int, const mosquitto_property *)) {
  CMOSQ_REQUIRE(disconnect_v5_callback_set)(mosq, on_disconnect);
}
void cmosq_publish_v5_callback_set(struct mosquitto *mosq,
                                   void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *)) {
  CMOSQ_REQUIRE(publish_v5_callback_set)(mosq, on_publish);
}
void cmosq_message_v5_callback_set(
    struct mosquitto *mosq,
    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *)) {
  CMOSQ_REQUIRE(message_v5_callback_set)(mosq, on_message);
}
void cmosq_subscribe_v5_callback_set(
    struct mosquitto *mosq, void (*on_subscribe)(struct mosquitto *, void *, int, int, const int *, const mosquitto_property *)) {
  CMOSQ_REQUIRE(subscribe_v5_callback_set)(mosq, on_subscribe);
}
int cmosq_pub_topic_check(const char *topic) { return CMOSQ_REQUIRE(pub_topic_check)(topic); }
int cmosq_sub_topic_check(const char *topic) { return CMOSQ_REQUIRE(sub_topic_check)(topic); }
int cmosq_topic_matches_sub(const char *sub, const char *topic, bool *result) {
  return CMOSQ_REQUIRE(topic_matches_sub)(sub, topic, result);
}
const char *cmosq_strerror(int mosq_errno) { return CMOSQ_REQUIRE(strerror)(mosq_errno); }
const char *cmosq_connack_string(int connack_code) { return CMOSQ_REQUIRE(connack_string)(connack_code); }
const char *cmosq_reason_string(int reason_code) { return CMOSQ_REQUIRE(reason_string)(reason_code); }
int cmosq_property_add_binary(mosquitto_property **proplist, int identifier, const void *value, uint16_t len) {
  return CMOSQ_REQUIRE(property_add_binary)(proplist, identifier, value, len);
}
int cmosq_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value) {
  return CMOSQ_REQUIRE(property_add_int32)(proplist, identifier, value);
}
int cmosq_property_add_string(mosquitto_property **proplist, int identifier, const char *value) {
  return CMOSQ_REQUIRE(property_add_string)(proplist, identifier, value);
}
int cmosq_property_add_string_pair(mosquitto_property **proplist, int identifier, const char *name,
                                   const char *value) {
  return CMOSQ_REQUIRE(property_add_string_pair)(proplist, identifier, name, value);
}
int cmosq_property_add_varint(mosquitto_property **proplist, int identifier, uint32_t value) {
  return CMOSQ_REQUIRE(property_add_varint)(proplist, identifier, value);
}
void cmosq_property_free_all(mosquitto_property **properties) { CMOSQ_REQUIRE(property_free_all)(properties); }
const mosquitto_property *cmosq_property_read_binary(const mosquitto_property *proplist, int identifier, void **value,
                                                     uint16_t *len, bool skip_first) {
  return CMOSQ_REQUIRE(property_read_binary)(proplist, identifier, value, len, skip_first);
}
const mosquitto_property *cmosq_property_read_byte(const mosquitto_property *proplist, int identifier, uint8_t *value,
                                                   bool skip_first) {
  return CMOSQ_REQUIRE(property_read_byte)(proplist, identifier, value, skip_first);
}
const mosquitto_property *cmosq_property_read_int32(const mosquitto_property *proplist, int identifier,
                                                    uint32_t *value, bool skip_first) {
  return CMOSQ_REQUIRE(property_read_int32)(proplist, identifier, value, skip_first);
}
const mosquitto_property *cmosq_property_read_string(const mosquitto_property *proplist, int identifier,
                                                     char **value, bool skip_first) {
  return CMOSQ_REQUIRE(property_read_string)(proplist, identifier, value, skip_first);
}
const mosquitto_property *cmosq_property_read_string_pair(const mosquitto_property *proplist, int identifier,
                                                          char **name, char **value, bool skip_first) {
  return CMOSQ_REQUIRE(property_read_string_pair)(proplist, identifier, name, value, skip_first);
}
const mosquitto_property *cmosq_property_read_varint(const mosquitto_property *proplist, int identifier,
                                                     uint32_t *value, bool skip_first) {
  return CMOSQ_REQUIRE(property_read_varint)(proplist, identifier, value, skip_first);
}
