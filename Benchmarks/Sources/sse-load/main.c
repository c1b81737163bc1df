// sse-load: the benchmark's Server-Sent-Events client. Many streams on one
// epoll loop in one thread, so that it outruns the server it measures (a
// Python client saturates first).
//
//   sse-load stream --port P --path PATH --clients N --count C [--timeout-ms T] [--idle-ms I]
//       Opens N streams; prints `ready` once every one has its response
//       headers; then reads `notification` events until each stream has the
//       C values 0..C-1 (the sequence number in the value), or nothing came
//       for I ms, or T ms passed. Checks that `id:` increases on each stream
//       and that no value is lost, repeated or reordered; latency is the
//       arrival time minus the CLOCK_MONOTONIC timestamp in the value.
//   sse-load count  --port P --path PATH --clients N --duration S [--warmup S]
//       Counts events (of any type) for S seconds after a warm-up.
//   sse-load hold   --port P --path PATH --clients N
//       Opens N streams, prints `ready`, holds them until standard input ends.
//   sse-load churn  --port P --path PATH[,PATH...] --clients N --duration S
//       N slots, each in a loop: connect, request a stream (the paths in
//       turn), wait for its headers, disconnect.
//
// The value format is bench-responder's: 4 bytes of sequence number, then 8
// of timestamp, little-endian, in the `"value":"<hex>"` of the event data.
// Responses are HTTP/1.1 with chunked transfer coding, which is decoded.
// Prints one JSON object on its last line.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// ---- latency histogram: 64 sub-buckets per power of two (1.6 % precision) ----
#define SUB 64
#define BUCKETS (SUB * 48)
static uint64_t histogram[BUCKETS];
static uint64_t histogram_count, histogram_max;

static int bucket_of(uint64_t v) {
    if (v < SUB) return (int)v;
    int msb = 63 - __builtin_clzll(v);
    int shift = msb - 5; // keep 6 significant bits
    int index = (shift + 1) * SUB / 2 + (int)((v >> shift) & (SUB / 2 - 1));
    return index < BUCKETS ? index : BUCKETS - 1;
}

static uint64_t bucket_value(int index) {
    if (index < SUB) return (uint64_t)index;
    int shift = index / (SUB / 2) - 1;
    uint64_t mantissa = (uint64_t)(index % (SUB / 2)) + SUB / 2;
    return (mantissa << shift) + ((1ull << shift) >> 1); // the middle of the bucket
}

static void record_latency(uint64_t v) {
    histogram[bucket_of(v)]++;
    histogram_count++;
    if (v > histogram_max) histogram_max = v;
}

static double percentile_us(double p) {
    if (!histogram_count) return 0;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)(histogram_count - 1)) + 1, seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
        seen += histogram[i];
        if (seen >= rank) return (double)bucket_value(i) / 1000.0;
    }
    return (double)histogram_max / 1000.0;
}

// ---- clients ----
enum phase { CONNECTING, WAITING_HEADERS, STREAMING, CLOSED };
enum chunk_state { CHUNK_SIZE, CHUNK_EXT, CHUNK_DATA, CHUNK_DATA_END, CHUNK_DONE };

typedef struct {
    int fd;
    enum phase phase;
    int path_index;
    char header[4096];
    size_t header_length;
    int chunked;
    enum chunk_state chunk;
    uint64_t chunk_remaining;
    char line[16384];
    size_t line_length;
    int line_overflow;
    // the event being read
    uint64_t event_id;
    int has_id;
    char event_type[32];
    int has_value;
    uint32_t seq;
    uint64_t stamp;
    // per stream
    uint64_t last_id;
    long events, notifications, unique, lost_gaps, out_of_order, duplicates, id_errors;
    long next_seq;
    uint64_t attempt_started;
    int done, closed_early, failed;
    uint64_t bytes;
} client_t;

typedef struct {
    const char *mode;
    int port, clients, count, timeout_ms, idle_ms, linger;
    double duration, warmup;
    char *paths[16];
    int path_count;
} options_t;

static options_t o = {.port = 8080, .clients = 1, .count = 1000, .timeout_ms = 60000, .idle_ms = 2000, .duration = 5,
                      .warmup = 1};
static client_t *clients;
static int epoll_fd;
static uint64_t first_event, last_event, measure_from, measure_until;
static long total_events_measured;
static long cycles, cycle_failures;
// Churn progress every 10 s: elapsed seconds, cycles so far, and slots
// whose current attempt has waited more than a second for its headers.
static long progress[1000][3];
static int progress_count;

// Event types seen, for `count` mode's report.
static struct {
    char name[32];
    long count;
} types[16];
static int type_count;

static void count_type(const char *name) {
    for (int i = 0; i < type_count; i++)
        if (!strcmp(types[i].name, name)) {
            types[i].count++;
            return;
        }
    if (type_count < 16) {
        snprintf(types[type_count].name, sizeof types[type_count].name, "%s", name);
        types[type_count++].count = 1;
    }
}

static int open_connection(client_t *c) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->phase = CONNECTING;
    c->attempt_started = now_ns();
    c->header_length = 0;
    c->chunk = CHUNK_SIZE;
    c->chunk_remaining = 0;
    c->line_length = 0;
    c->line_overflow = 0;
    c->has_id = c->has_value = 0;
    c->event_type[0] = 0;
    struct epoll_event event = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
    return 0;
}

static void close_connection(client_t *c) {
    if (c->fd >= 0) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->phase = CLOSED;
}

static int send_request(client_t *c) {
    char request[1024];
    int length = snprintf(request, sizeof request,
                          "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n"
                          "Cache-Control: no-cache\r\n\r\n",
                          o.paths[c->path_index % o.path_count], o.port);
    ssize_t written = send(c->fd, request, (size_t)length, MSG_NOSIGNAL);
    if (written != length) return -1;
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &event);
    c->phase = WAITING_HEADERS;
    return 0;
}

static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void parse_value(client_t *c, const char *data, size_t length) {
    static const char key[] = "\"value\":\"";
    const char *at = memmem(data, length, key, sizeof key - 1);
    if (!at) return;
    at += sizeof key - 1;
    const char *end = data + length;
    unsigned char bytes[12];
    for (int i = 0; i < 12; i++) {
        if (at + 2 > end) return;
        int high = hex_value(at[0]), low = hex_value(at[1]);
        if (high < 0 || low < 0) return;
        bytes[i] = (unsigned char)(high << 4 | low);
        at += 2;
    }
    memcpy(&c->seq, bytes, 4);
    memcpy(&c->stamp, bytes + 4, 8);
    c->has_value = 1;
}

static void dispatch_event(client_t *c) {
    uint64_t arrived = now_ns();
    c->events++;
    if (!first_event) first_event = arrived;
    last_event = arrived;
    if (arrived >= measure_from && (!measure_until || arrived < measure_until)) total_events_measured++;
    if (c->has_id) {
        if (c->last_id && c->event_id <= c->last_id) c->id_errors++;
        c->last_id = c->event_id;
    }
    count_type(c->event_type[0] ? c->event_type : "message");
    if (!strcmp(c->event_type, "notification") && c->has_value) {
        c->notifications++;
        if (arrived >= c->stamp) record_latency(arrived - c->stamp);
        long seq = (long)c->seq;
        if (seq == c->next_seq) {
            c->unique++;
            c->next_seq = seq + 1;
        } else if (seq > c->next_seq) {
            c->lost_gaps += seq - c->next_seq;
            c->unique++;
            c->next_seq = seq + 1;
        } else {
            c->out_of_order++;
        }
        if (!strcmp(o.mode, "stream") && c->next_seq >= o.count) c->done = 1;
    }
    c->has_id = c->has_value = 0;
    c->event_type[0] = 0;
}

static void handle_line(client_t *c, const char *line, size_t length) {
    if (length && line[length - 1] == '\r') length--;
    if (length == 0) {
        if (c->has_id || c->has_value || c->event_type[0]) dispatch_event(c);
        return;
    }
    if (line[0] == ':') return;
    if (length > 4 && !memcmp(line, "id: ", 4)) {
        c->event_id = strtoull(line + 4, NULL, 10);
        c->has_id = 1;
    } else if (length > 7 && !memcmp(line, "event: ", 7)) {
        size_t n = length - 7 < sizeof c->event_type - 1 ? length - 7 : sizeof c->event_type - 1;
        memcpy(c->event_type, line + 7, n);
        c->event_type[n] = 0;
    } else if (length > 6 && !memcmp(line, "data: ", 6)) {
        parse_value(c, line + 6, length - 6);
    }
}

// Event-stream bytes (after chunk decoding).
static void consume_body(client_t *c, const char *data, size_t length) {
    c->bytes += length;
    while (length) {
        const char *newline = memchr(data, '\n', length);
        size_t take = newline ? (size_t)(newline - data) : length;
        if (c->line_length == 0 && newline) {
            handle_line(c, data, take); // the whole line is here: no copy
        } else {
            if (c->line_length + take < sizeof c->line) {
                memcpy(c->line + c->line_length, data, take);
                c->line_length += take;
            } else {
                c->line_overflow = 1;
            }
            if (newline) {
                if (!c->line_overflow) handle_line(c, c->line, c->line_length);
                c->line_length = 0;
                c->line_overflow = 0;
            }
        }
        if (!newline) return;
        data += take + 1;
        length -= take + 1;
    }
}

// Chunked transfer decoding; returns 0 at the last chunk.
static int consume_chunked(client_t *c, const char *data, size_t length) {
    size_t i = 0;
    while (i < length) {
        switch (c->chunk) {
        case CHUNK_SIZE: {
            int digit = hex_value(data[i]);
            if (digit >= 0) c->chunk_remaining = c->chunk_remaining * 16 + (uint64_t)digit;
            else c->chunk = CHUNK_EXT;
            if (digit < 0 && data[i] == '\n') {
                i++;
                goto size_done;
            }
            i++;
            break;
        }
        case CHUNK_EXT:
            if (data[i++] == '\n') goto size_done;
            break;
        size_done:
            // The size line is consumed: what follows is the chunk's data,
            // which may itself begin with a newline (an event's blank line).
            if (c->chunk_remaining == 0) {
                c->chunk = CHUNK_DONE;
                return 0;
            }
            c->chunk = CHUNK_DATA;
            break;
        case CHUNK_DATA: {
            size_t take = length - i < c->chunk_remaining ? length - i : (size_t)c->chunk_remaining;
            consume_body(c, data + i, take);
            i += take;
            c->chunk_remaining -= take;
            if (c->chunk_remaining == 0) c->chunk = CHUNK_DATA_END;
            break;
        }
        case CHUNK_DATA_END:
            if (data[i++] == '\n') c->chunk = CHUNK_SIZE;
            break;
        case CHUNK_DONE:
            return 0;
        }
    }
    return 1;
}

static int headers_received;

// Reads what is there; returns -1 when the connection ended.
static int read_client(client_t *c) {
    char buffer[65536];
    for (;;) {
        ssize_t n = recv(c->fd, buffer, sizeof buffer, 0);
        if (n == 0) return -1;
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        const char *data = buffer;
        size_t length = (size_t)n;
        if (c->phase == WAITING_HEADERS) {
            size_t room = sizeof c->header - 1 - c->header_length;
            size_t take = length < room ? length : room;
            memcpy(c->header + c->header_length, data, take);
            c->header_length += take;
            c->header[c->header_length] = 0;
            char *end = strstr(c->header, "\r\n\r\n");
            if (!end) {
                if (take < length) return -1; // headers too long
                continue;
            }
            if (strncmp(c->header, "HTTP/1.1 200", 12) != 0) {
                c->failed = 1;
                return -1;
            }
            c->chunked = strcasestr(c->header, "transfer-encoding: chunked") != NULL;
            size_t header_bytes = (size_t)(end + 4 - c->header);
            size_t already = c->header_length - take; // header bytes from earlier reads
            data += header_bytes - already;
            length -= header_bytes - already;
            c->phase = STREAMING;
            headers_received++;
            if (!strcmp(o.mode, "churn")) return -1; // headers seen: one cycle done
        }
        if (length) {
            if (c->chunked) {
                if (!consume_chunked(c, data, length)) return -1;
            } else {
                consume_body(c, data, length);
            }
        }
    }
}

static void raise_file_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

static int input_closed(void) {
    struct pollfd in = {.fd = 0, .events = POLLIN};
    if (poll(&in, 1, 0) <= 0) return 0;
    char buffer[256];
    return read(0, buffer, sizeof buffer) <= 0;
}

static void usage(void) {
    fprintf(stderr, "usage: sse-load stream|count|hold|churn --port P --path PATH --clients N [--count C] "
                    "[--duration S] [--warmup S] [--timeout-ms T] [--idle-ms I]\n");
    exit(64);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    o.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *key = argv[i], *value = argv[i + 1];
        if (!strcmp(key, "--port")) o.port = atoi(value);
        else if (!strcmp(key, "--path")) {
            char *copy = strdup(value), *save = NULL;
            for (char *p = strtok_r(copy, ",", &save); p && o.path_count < 16; p = strtok_r(NULL, ",", &save))
                o.paths[o.path_count++] = p;
        } else if (!strcmp(key, "--clients")) o.clients = atoi(value);
        else if (!strcmp(key, "--count")) o.count = atoi(value);
        else if (!strcmp(key, "--timeout-ms")) o.timeout_ms = atoi(value);
        else if (!strcmp(key, "--idle-ms")) o.idle_ms = atoi(value);
        else if (!strcmp(key, "--duration")) o.duration = atof(value);
        else if (!strcmp(key, "--warmup")) o.warmup = atof(value);
        else if (!strcmp(key, "--linger")) o.linger = atoi(value);
        else usage();
    }
    if (!o.path_count || o.clients < 1) usage();
    // A timed mode runs its whole duration whatever the default timeout.
    double timed = o.warmup + o.duration + 30;
    if ((!strcmp(o.mode, "churn") || !strcmp(o.mode, "count")) && o.timeout_ms < timed * 1000) o.timeout_ms = (int)(timed * 1000);
    int stream = !strcmp(o.mode, "stream"), count = !strcmp(o.mode, "count"), hold = !strcmp(o.mode, "hold"),
        churn = !strcmp(o.mode, "churn");
    if (!stream && !count && !hold && !churn) usage();
    raise_file_limit();
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    clients = calloc((size_t)o.clients, sizeof(client_t));
    for (int i = 0; i < o.clients; i++) {
        clients[i].fd = -1;
        clients[i].path_index = i;
        clients[i].phase = CLOSED;
    }
    uint64_t start = now_ns();
    // Connections are opened a batch at a time so that the listen backlog
    // never overflows (a refused SYN costs a one-second retransmission).
    // `in_progress` counts those not yet streaming, failed or closed.
    int opened = 0, in_progress = 0, ready_printed = 0;
    uint64_t ready_at = 0, churn_end = 0;
    struct epoll_event events[256];
    for (;;) {
        while (opened < o.clients && in_progress < 64) {
            if (open_connection(&clients[opened]) < 0) clients[opened].failed = 1;
            else in_progress++;
            opened++;
        }
        uint64_t now = now_ns();
        if (!ready_printed && opened == o.clients && (in_progress == 0 || churn)) {
            int failed = 0;
            for (int i = 0; i < o.clients; i++) failed += clients[i].failed;
            printf("ready %d %d\n", o.clients - failed, failed);
            fflush(stdout);
            ready_printed = 1;
            ready_at = now;
            if (count) {
                measure_from = now + (uint64_t)(o.warmup * 1e9);
                measure_until = measure_from + (uint64_t)(o.duration * 1e9);
            }
            churn_end = now + (uint64_t)(o.duration * 1e9);
        }
        if (churn && ready_printed && progress_count < 1000 &&
            now - ready_at >= (uint64_t)(progress_count + 1) * 10000000000ull) {
            long waiting = 0;
            for (int i = 0; i < o.clients; i++)
                waiting += clients[i].phase != STREAMING && clients[i].phase != CLOSED &&
                           now - clients[i].attempt_started > 1000000000ull;
            progress[progress_count][0] = (long)((now - ready_at) / 1000000000ull);
            progress[progress_count][1] = cycles;
            progress[progress_count][2] = waiting;
            progress_count++;
        }
        if (now - start > (uint64_t)o.timeout_ms * 1000000ull && !hold) break;
        if (ready_printed) {
            if (stream) {
                int all = 1;
                for (int i = 0; i < o.clients && all; i++) all = clients[i].done || clients[i].phase == CLOSED;
                if (all) break;
                if (last_event && now - last_event > (uint64_t)o.idle_ms * 1000000ull) break;
            }
            if (count && now >= measure_until) break;
            if (churn && now >= churn_end) break;
            if (hold && input_closed()) break;
        }
        int n = epoll_wait(epoll_fd, events, 256, 10);
        for (int k = 0; k < n; k++) {
            client_t *c = events[k].data.ptr;
            enum phase before = c->phase;
            int ended = 0;
            if (c->phase == CONNECTING) {
                int error = 0;
                socklen_t size = sizeof error;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &size);
                if (error || send_request(c) < 0) ended = 1;
                else continue;
            } else if (read_client(c) < 0) {
                ended = 1;
            }
            if (!churn && before == WAITING_HEADERS && c->phase == STREAMING) in_progress--;
            if (!ended) continue;
            if (churn) {
                if (c->phase == STREAMING) cycles++;
                else cycle_failures++;
                close_connection(c);
                if (!ready_printed || now_ns() < churn_end) {
                    c->path_index++;
                    if (open_connection(c) < 0) cycle_failures++;
                }
                continue;
            }
            if (c->phase == WAITING_HEADERS || c->phase == CONNECTING) {
                c->failed = 1;
                in_progress--;
            } else if (!c->done) {
                c->closed_early = 1;
            }
            close_connection(c);
        }
    }
    uint64_t end = now_ns();
    long events_total = 0, notifications = 0, unique = 0, lost = 0, out_of_order = 0, id_errors = 0, failed = 0,
         closed_early = 0, done = 0, min_unique = -1, max_unique = 0;
    uint64_t bytes = 0;
    for (int i = 0; i < o.clients; i++) {
        client_t *c = &clients[i];
        events_total += c->events;
        notifications += c->notifications;
        unique += c->unique;
        // values never seen at the end of the sequence are lost too
        long missing_tail = stream && c->next_seq < o.count && !c->failed ? o.count - c->next_seq : 0;
        lost += c->lost_gaps + missing_tail;
        out_of_order += c->out_of_order;
        id_errors += c->id_errors;
        failed += c->failed;
        closed_early += c->closed_early;
        done += c->done;
        bytes += c->bytes;
        if (!c->failed) {
            if (min_unique < 0 || c->unique < min_unique) min_unique = c->unique;
            if (c->unique > max_unique) max_unique = c->unique;
        }
        if (c->fd >= 0) close(c->fd);
    }
    double span = last_event > first_event ? (double)(last_event - first_event) / 1e9 : 0;
    printf("{\"mode\":\"%s\",\"clients\":%d,\"failed\":%ld,\"closed_early\":%ld,\"done\":%ld,\"events\":%ld,"
           "\"notifications\":%ld,\"unique\":%ld,\"lost\":%ld,\"out_of_order\":%ld,\"id_errors\":%ld,\"bytes\":%" PRIu64
           ",\"min_per_client\":%ld,\"max_per_client\":%ld,\"span_s\":%.3f,\"elapsed_s\":%.3f,\"ready_s\":%.3f,",
           o.mode, o.clients, failed, closed_early, done, events_total, notifications, unique, lost, out_of_order,
           id_errors, bytes, min_unique < 0 ? 0 : min_unique, max_unique, span, (double)(end - start) / 1e9,
           ready_at ? (double)(ready_at - start) / 1e9 : -1);
    printf("\"delivered_rate\":%.1f,", span > 0 ? (double)notifications / span : 0);
    if (count) printf("\"measured_events\":%ld,\"measured_rate\":%.1f,", total_events_measured,
                      (double)total_events_measured / o.duration);
    if (churn) {
        printf("\"cycles\":%ld,\"cycle_failures\":%ld,\"cycle_rate\":%.1f,\"progress\":[", cycles, cycle_failures,
               (double)cycles / o.duration);
        for (int i = 0; i < progress_count; i++)
            printf("%s[%ld,%ld,%ld]", i ? "," : "", progress[i][0], progress[i][1], progress[i][2]);
        printf("],");
    }
    printf("\"headers\":%d,\"types\":{", headers_received);
    for (int i = 0; i < type_count; i++) printf("%s\"%s\":%ld", i ? "," : "", types[i].name, types[i].count);
    printf("},\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f}\n", percentile_us(50),
           percentile_us(90), percentile_us(99), percentile_us(99.9), (double)histogram_max / 1000.0);
    // With --linger 1 (not in hold mode, whose input has ended): stay until
    // standard input ends (at most 10 s), so the runner can read this
    // process's CPU time in /proc before it is gone.
    fflush(stdout);
    if (o.linger && !hold) {
        char buffer[64];
        for (int i = 0; i < 1000; i++) {
            struct pollfd in = {.fd = 0, .events = POLLIN};
            if (poll(&in, 1, 10) > 0 && read(0, buffer, sizeof buffer) <= 0) break;
        }
    }
    return 0;
}
