// dbus-floor: the raw D-Bus baselines of the benchmark, straight on libdbus
// with no layer in between (one thread, blocking reads, no allocation
// beyond libdbus's own per message). What the gateway does is measured
// against what this does on the same bus, against the same responder.
//
//   dbus-floor read    --bus A [--inflight N] [--duration S] [--warmup S] [--path P]
//       GattCharacteristic1.ReadValue round trips, N in flight; latency and rate.
//   dbus-floor listen  --bus A --count C [--timeout-ms T] [--idle-ms I] [--path P]
//       receives the responder's PropertiesChanged(Value) notifications;
//       prints `ready` once its match rule is on the bus; latency from the
//       timestamp in each value, loss from its sequence number.
//   dbus-floor scan    --bus A [--duration S] [--warmup S] [--adapter P]
//       starts discovery (DuplicateData) and counts org.bluez signals.
//   dbus-floor startup --bus A
//       connects, adds the match rule, reads GetManagedObjects; prints
//       `ready` then the time it took.
//
// Every mode prints one JSON object on the last line of its output.
#include <dbus/dbus.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <time.h>

#define DEFAULT_READ_PATH "/org/bluez/hci0/dev_B0_0B_00_00_00_01/service000c/char000d"
#define DEFAULT_NOTIFY_PATH "/org/bluez/hci0/dev_B0_0B_00_00_00_01/service000c/char000f"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, DBusError *error) {
    fprintf(stderr, "dbus-floor: %s: %s\n", what, error && dbus_error_is_set(error) ? error->message : "failed");
    exit(1);
}

// Latency samples in nanoseconds, kept whole and sorted once at the end:
// exact percentiles, and at most a few million samples per run.
typedef struct {
    uint64_t *values;
    size_t count, capacity;
} samples_t;

static void samples_add(samples_t *s, uint64_t v) {
    if (s->count == s->capacity) {
        s->capacity = s->capacity ? s->capacity * 2 : 65536;
        s->values = realloc(s->values, s->capacity * sizeof(uint64_t));
        if (!s->values) die("out of memory", NULL);
    }
    s->values[s->count++] = v;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile_us(samples_t *s, double p) {
    if (s->count == 0) return 0;
    size_t index = (size_t)(p / 100.0 * (double)(s->count - 1) + 0.5);
    return (double)s->values[index] / 1000.0;
}

static void print_latency(samples_t *s) {
    qsort(s->values, s->count, sizeof(uint64_t), compare_u64);
    printf("\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f", percentile_us(s, 50),
           percentile_us(s, 90), percentile_us(s, 99), percentile_us(s, 99.9), percentile_us(s, 100));
}

// With --linger 1: after the result, stay until standard input ends (at
// most 10 s), so the runner can read this process's CPU time in /proc
// before it is gone.
static void linger(void) {
    fflush(stdout);
    char buffer[64];
    for (int i = 0; i < 1000; i++) {
        struct pollfd in = {.fd = 0, .events = POLLIN};
        if (poll(&in, 1, 10) > 0 && read(0, buffer, sizeof buffer) <= 0) return;
    }
}

typedef struct {
    const char *bus, *path, *adapter;
    int inflight, count, timeout_ms, idle_ms, linger;
    double duration, warmup;
} options_t;

static DBusConnection *open_bus(const char *address) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) die("cannot connect", &error);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &error)) die("Hello failed", &error);
    return connection;
}

static DBusMessage *read_call(const char *path) {
    DBusMessage *message =
        dbus_message_new_method_call("org.bluez", path, "org.bluez.GattCharacteristic1", "ReadValue");
    DBusMessageIter iter, dict;
    dbus_message_iter_init_append(message, &iter);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_close_container(&iter, &dict);
    return message;
}

// ReadValue round trips with `inflight` calls outstanding at all times.
static int run_read(options_t *o) {
    DBusConnection *connection = open_bus(o->bus);
    int n = o->inflight;
    dbus_uint32_t *serials = calloc((size_t)n, sizeof(dbus_uint32_t));
    uint64_t *sent_at = calloc((size_t)n, sizeof(uint64_t));
    samples_t samples = {0};
    long errors = 0, replies = 0;
    uint64_t start = now_ns();
    uint64_t measure_from = start + (uint64_t)(o->warmup * 1e9);
    uint64_t end = measure_from + (uint64_t)(o->duration * 1e9);
    for (int i = 0; i < n; i++) {
        DBusMessage *call = read_call(o->path);
        sent_at[i] = now_ns();
        dbus_connection_send(connection, call, &serials[i]);
        dbus_message_unref(call);
    }
    dbus_connection_flush(connection);
    int outstanding = n;
    while (outstanding > 0) {
        if (!dbus_connection_read_write(connection, 1000)) die("disconnected", NULL);
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            int type = dbus_message_get_type(message);
            if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) {
                dbus_uint32_t reply_to = dbus_message_get_reply_serial(message);
                for (int i = 0; i < n; i++) {
                    if (serials[i] != reply_to || serials[i] == 0) continue;
                    uint64_t t = now_ns();
                    if (type == DBUS_MESSAGE_TYPE_ERROR) errors++;
                    if (sent_at[i] >= measure_from && t <= end) {
                        samples_add(&samples, t - sent_at[i]);
                        replies++;
                    }
                    if (t < end) {
                        DBusMessage *call = read_call(o->path);
                        sent_at[i] = now_ns();
                        dbus_connection_send(connection, call, &serials[i]);
                        dbus_message_unref(call);
                    } else {
                        serials[i] = 0;
                        outstanding--;
                    }
                    break;
                }
            }
            dbus_message_unref(message);
        }
    }
    printf("{\"mode\":\"read\",\"inflight\":%d,\"count\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"rps\":%.1f,", n, replies,
           errors, o->duration, (double)replies / o->duration);
    print_latency(&samples);
    printf("}\n");
    dbus_connection_close(connection);
    return errors ? 2 : 0;
}

// Finds the `Value` bytes in a PropertiesChanged body (s, a{sv}, as).
static int value_bytes(DBusMessage *message, const unsigned char **bytes, int *length) {
    DBusMessageIter iter, dict, entry, variant, array;
    if (!dbus_message_iter_init(message, &iter) || dbus_message_iter_get_arg_type(&iter) != DBUS_TYPE_STRING) return 0;
    dbus_message_iter_next(&iter);
    if (dbus_message_iter_get_arg_type(&iter) != DBUS_TYPE_ARRAY) return 0;
    dbus_message_iter_recurse(&iter, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") == 0) {
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &variant);
            if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY) return 0;
            dbus_message_iter_recurse(&variant, &array);
            dbus_message_iter_get_fixed_array(&array, bytes, length);
            return 1;
        }
        dbus_message_iter_next(&dict);
    }
    return 0;
}

static void add_match(DBusConnection *connection, const char *rule) {
    DBusError error;
    dbus_error_init(&error);
    dbus_bus_add_match(connection, rule, &error);
    if (dbus_error_is_set(&error)) die("AddMatch failed", &error);
}

// Receives notifications until `count` distinct ones arrived, or none came
// for `idle_ms`, or `timeout_ms` passed.
static int run_listen(options_t *o) {
    DBusConnection *connection = open_bus(o->bus);
    char rule[512];
    snprintf(rule, sizeof rule,
             "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged',path='%s'",
             o->path);
    add_match(connection, rule);
    printf("ready\n");
    fflush(stdout);
    unsigned char *seen = calloc((size_t)o->count, 1);
    samples_t samples = {0};
    long received = 0, unique = 0, duplicates = 0, out_of_order = 0, other = 0;
    long last_seq = -1;
    uint64_t start = now_ns(), first = 0, last = 0;
    while (unique < o->count) {
        uint64_t t = now_ns();
        if (t - start > (uint64_t)o->timeout_ms * 1000000ull) break;
        if (last && t - last > (uint64_t)o->idle_ms * 1000000ull) break;
        if (!dbus_connection_read_write(connection, 20)) die("disconnected", NULL);
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            const unsigned char *bytes;
            int length;
            if (dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL && value_bytes(message, &bytes, &length) &&
                length >= 12) {
                uint64_t arrived = now_ns();
                uint32_t seq;
                uint64_t stamp;
                memcpy(&seq, bytes, 4);
                memcpy(&stamp, bytes + 4, 8);
                received++;
                if (!first) first = arrived;
                last = arrived;
                if ((long)seq <= last_seq) out_of_order++;
                last_seq = seq;
                if (seq < (uint32_t)o->count) {
                    if (seen[seq]) duplicates++;
                    else {
                        seen[seq] = 1;
                        unique++;
                    }
                }
                if (arrived >= stamp) samples_add(&samples, arrived - stamp);
            } else {
                other++;
            }
            dbus_message_unref(message);
        }
    }
    double span = last > first ? (double)(last - first) / 1e9 : 0;
    printf("{\"mode\":\"listen\",\"expected\":%d,\"received\":%ld,\"unique\":%ld,\"lost\":%ld,\"duplicates\":%ld,"
           "\"out_of_order\":%ld,\"other\":%ld,\"seconds\":%.3f,\"rate\":%.1f,",
           o->count, received, unique, o->count - unique, duplicates, out_of_order, other, span,
           span > 0 ? (double)(received - 1) / span : 0);
    print_latency(&samples);
    printf("}\n");
    dbus_connection_close(connection);
    return 0;
}

static DBusMessage *call_blocking(DBusConnection *connection, DBusMessage *call) {
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 25000, &error);
    dbus_message_unref(call);
    if (!reply) die("call failed", &error);
    return reply;
}

static void append_entry(DBusMessageIter *dict, const char *key, int type, const char *signature, const void *value) {
    DBusMessageIter entry, variant;
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

// Discovery with DuplicateData, as the gateway's `GET /v1/scan?duplicates=true`
// asks for it; counts every org.bluez signal during `duration`.
static int run_scan(options_t *o) {
    DBusConnection *connection = open_bus(o->bus);
    add_match(connection, "type='signal',sender='org.bluez'");
    DBusMessage *call = dbus_message_new_method_call("org.bluez", o->adapter, "org.bluez.Adapter1", "SetDiscoveryFilter");
    DBusMessageIter iter, dict;
    dbus_message_iter_init_append(call, &iter);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict);
    const char *transport = "le";
    dbus_bool_t duplicates = TRUE;
    append_entry(&dict, "Transport", DBUS_TYPE_STRING, "s", &transport);
    append_entry(&dict, "DuplicateData", DBUS_TYPE_BOOLEAN, "b", &duplicates);
    dbus_message_iter_close_container(&iter, &dict);
    dbus_message_unref(call_blocking(connection, call));
    dbus_message_unref(call_blocking(
        connection, dbus_message_new_method_call("org.bluez", o->adapter, "org.bluez.Adapter1", "StartDiscovery")));
    uint64_t start = now_ns();
    uint64_t measure_from = start + (uint64_t)(o->warmup * 1e9);
    uint64_t end = measure_from + (uint64_t)(o->duration * 1e9);
    long signals = 0, added = 0, changed = 0;
    while (now_ns() < end) {
        if (!dbus_connection_read_write(connection, 20)) die("disconnected", NULL);
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            uint64_t t = now_ns();
            if (dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL && t >= measure_from && t < end) {
                signals++;
                const char *member = dbus_message_get_member(message);
                if (member && strcmp(member, "InterfacesAdded") == 0) added++;
                if (member && strcmp(member, "PropertiesChanged") == 0) changed++;
            }
            dbus_message_unref(message);
        }
    }
    dbus_message_unref(call_blocking(
        connection, dbus_message_new_method_call("org.bluez", o->adapter, "org.bluez.Adapter1", "StopDiscovery")));
    printf("{\"mode\":\"scan\",\"signals\":%ld,\"interfaces_added\":%ld,\"properties_changed\":%ld,\"seconds\":%.3f,"
           "\"rate\":%.1f}\n",
           signals, added, changed, o->duration, (double)signals / o->duration);
    dbus_connection_close(connection);
    return 0;
}

// What any BlueZ client must do before it can answer: connect, subscribe,
// read the object tree.
static int run_startup(options_t *o) {
    uint64_t start = now_ns();
    DBusConnection *connection = open_bus(o->bus);
    add_match(connection, "type='signal',sender='org.bluez'");
    DBusMessage *reply = call_blocking(
        connection,
        dbus_message_new_method_call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"));
    uint64_t done = now_ns();
    DBusMessageIter iter, objects;
    long count = 0;
    if (dbus_message_iter_init(reply, &iter) && dbus_message_iter_get_arg_type(&iter) == DBUS_TYPE_ARRAY) {
        dbus_message_iter_recurse(&iter, &objects);
        while (dbus_message_iter_get_arg_type(&objects) == DBUS_TYPE_DICT_ENTRY) {
            count++;
            dbus_message_iter_next(&objects);
        }
    }
    dbus_message_unref(reply);
    printf("ready\n{\"mode\":\"startup\",\"objects\":%ld,\"ms\":%.3f}\n", count, (double)(done - start) / 1e6);
    fflush(stdout);
    dbus_connection_close(connection);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dbus-floor read|listen|scan|startup --bus ADDRESS [options]\n");
        return 64;
    }
    options_t o = {.path = NULL, .adapter = "/org/bluez/hci0", .inflight = 1, .count = 1000, .timeout_ms = 60000,
                   .idle_ms = 2000, .duration = 5, .warmup = 1};
    for (int i = 2; i < argc; i++) {
        const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) {
            fprintf(stderr, "dbus-floor: %s needs a value\n", key);
            return 64;
        }
        i++;
        if (!strcmp(key, "--bus")) o.bus = value;
        else if (!strcmp(key, "--path")) o.path = value;
        else if (!strcmp(key, "--adapter")) o.adapter = value;
        else if (!strcmp(key, "--inflight")) o.inflight = atoi(value);
        else if (!strcmp(key, "--count")) o.count = atoi(value);
        else if (!strcmp(key, "--timeout-ms")) o.timeout_ms = atoi(value);
        else if (!strcmp(key, "--idle-ms")) o.idle_ms = atoi(value);
        else if (!strcmp(key, "--duration")) o.duration = atof(value);
        else if (!strcmp(key, "--warmup")) o.warmup = atof(value);
        else if (!strcmp(key, "--linger")) o.linger = atoi(value);
        else {
            fprintf(stderr, "dbus-floor: unknown option %s\n", key);
            return 64;
        }
    }
    if (!o.bus || o.inflight < 1 || o.count < 1 || o.duration <= 0) {
        fprintf(stderr, "dbus-floor: --bus is required; counts and durations must be positive\n");
        return 64;
    }
    const char *mode = argv[1];
    int status;
    if (!strcmp(mode, "read")) {
        if (!o.path) o.path = DEFAULT_READ_PATH;
        status = run_read(&o);
    } else if (!strcmp(mode, "listen")) {
        if (!o.path) o.path = DEFAULT_NOTIFY_PATH;
        status = run_listen(&o);
    } else if (!strcmp(mode, "scan")) {
        status = run_scan(&o);
    } else if (!strcmp(mode, "startup")) {
        status = run_startup(&o);
    } else {
        fprintf(stderr, "dbus-floor: unknown mode %s\n", mode);
        return 64;
    }
    if (o.linger) linger();
    return status;
}
