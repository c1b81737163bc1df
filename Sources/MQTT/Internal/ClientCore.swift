import CMosquitto
import Glibc
import Synchronization

/// The state behind a `Client`: the libmosquitto handle, the outbox, the
/// subscriptions and the observers, and the loop thread that drives it all.
///
/// Threads:
/// - The loop thread (`mqtt-loop`, started by `start()`) connects, runs
///   its turns (poll, then `mosquitto_loop_read`, `_write` and `_misc`),
///   reconnects with backoff, and runs every libmosquitto
///   callback (connect, disconnect, publish acknowledged, message, subscribe
///   acknowledged), hence every message handler.
/// - Any thread calls `publish`, `subscribe`, `unsubscribe` and `stop`.
///
/// Locks: `state` is taken inside libmosquitto callbacks (which hold
/// libmosquitto's `callback_mutex`), and calls to `mosquitto_publish_v5`,
/// `mosquitto_subscribe_v5` and `mosquitto_unsubscribe` are made with `state`
/// held (so that an acknowledgement can never be processed before its
/// message id is recorded). That order (callback_mutex, then `state`, then
/// libmosquitto's queue mutexes) is never reversed: those three calls only
/// take libmosquitto's message and packet-queue mutexes, never
/// callback_mutex, because the handle is in threaded mode
/// (`mosquitto_threaded_set`) and so never writes to the socket on the
/// caller's thread. Message handlers are called with `state` released.
// @unchecked Sendable: `handle` is a C pointer. The invariant that makes
// sharing safe: options, credentials, TLS, the Will and the callbacks are
// set in `init` before any other thread can see the handle; afterwards
// only libmosquitto's thread-safe calls are made on it (publish,
// subscribe, unsubscribe, disconnect from any thread; connect and loop on
// the loop thread alone); `mosquitto_destroy` runs in `deinit`, after
// the loop thread (which holds a strong reference) has ended. Everything
// else mutable is inside the `state` mutex or atomic.
final class ClientCore: @unchecked Sendable {
    let handle: OpaquePointer
    let configuration: Configuration
    /// Wakes the loop thread from its wait between reconnect attempts.
    let wakeDescriptor: Int32
    let state: Mutex<State>
    let loopFinished = Atomic(false)

    struct State {
        var connection: ConnectionState = .idle
        var started = false
        var stopRequested = false
        var outbox: Outbox<OutgoingMessage>
        /// Message ids of QoS 1/2 messages libmosquitto holds for us.
        var inFlight: Set<Int32> = []
        var statistics = Statistics()
        var nextSubscriptionID = 0
        var subscriptions: [Int: SubscriptionEntry] = [:]
        /// SUBSCRIBE message id -> the subscriptions it (re)made.
        var pendingSubscribes: [Int32: [Int]] = [:]
        /// Whether the broker takes subscription identifiers (MQTT 5, and
        /// its CONNACK does not say otherwise).
        var subscriptionIdentifiersAvailable = false
        /// The MQTT 5 subscription identifier of each filter subscribed to
        /// (one per filter, as the broker keeps one subscription per
        /// filter), and the way back. Kept for the client's life.
        var filterIdentifiers: [String: UInt32] = [:]
        var identifiedFilters: [UInt32: String] = [:]
        var observers: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
        var nextObserverID = 0
        var thread: pthread_t?
    }

    struct SubscriptionEntry {
        var filter: String
        var qos: QoS
        var handler: @Sendable (Message) -> Void
        var acknowledged = false
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    init(configuration: Configuration) throws {
        try MosquittoLibrary.load()
        guard (5...65535).contains(configuration.keepAlive) else {
            throw MQTTError(.invalidArgument, "keepalive must be between 5 and 65535 seconds")
        }
        guard configuration.inFlightLimit >= 1, configuration.inFlightLimit <= 65535,
            configuration.outboxCapacity >= 0
        else {
            throw MQTTError(.invalidArgument, "the in-flight limit is 1...65535 and the outbox capacity at least 0")
        }
        guard let handle = cmosq_new(configuration.clientID, configuration.cleanStart, nil) else {
            throw MQTTError(.invalidArgument, "cannot create an MQTT client for id \(configuration.clientID)")
        }
        let wake = cmosq_eventfd()
        guard wake >= 0 else {
            cmosq_destroy(handle)
            throw MQTTError(.library, "eventfd failed: errno \(errno)")
        }
        self.handle = handle
        self.configuration = configuration
        self.wakeDescriptor = wake
        self.state = Mutex(State(outbox: Outbox(capacity: configuration.outboxCapacity)))
        // On failure, deinit frees the handle and the descriptor.
        try configure()
        cmosq_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        installCallbacks()
    }

    deinit {
        cmosq_destroy(handle)
        close(wakeDescriptor)
    }

    private func configure() throws {
        func check(_ result: Int32, _ what: String) throws {
            guard result == CMOSQ_ERR_SUCCESS else { throw MQTTError.library(result, what) }
        }
        try check(
            cmosq_int_option(handle, CMOSQ_OPT_PROTOCOL_VERSION, configuration.protocolVersion.rawValue),
            "protocol version")
        // Small packets go out at once: with Nagle's algorithm a request
        // and its answer (a command, a claim, a reply) each waited for the
        // peer's delayed ACK, some 40 ms a hop (docs/fleet.md, Cost).
        try check(cmosq_int_option(handle, CMOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        // Threaded mode: calls from other threads queue packets and wake the
        // loop thread instead of writing to the socket themselves.
        try check(cmosq_threaded_set(handle, true), "threaded mode")
        if let credentials = configuration.effectiveCredentials {
            try check(
                cmosq_username_pw_set(handle, credentials.username, credentials.password), "user name and password")
        }
        if configuration.broker.usesTLS {
            let files = configuration.tls
            for path in [files.caFile, files.certificateFile, files.keyFile].compactMap({ $0 })
            where access(path, R_OK) != 0 {
                throw MQTTError(.tlsFiles, "cannot read \(path)")
            }
            guard (files.certificateFile == nil) == (files.keyFile == nil) else {
                throw MQTTError(.tlsFiles, "a client certificate needs its key, and a key its certificate")
            }
            let caDirectory = files.caFile == nil ? "/etc/ssl/certs" : nil
            try check(
                cmosq_tls_set(handle, files.caFile, caDirectory, files.certificateFile, files.keyFile, nil), "TLS")
        }
        if let will = configuration.will {
            try check(
                cmosq_will_set_v5(
                    handle, will.topic, Int32(will.payload.count), will.payload, Int32(will.qos.rawValue), will.retain,
                    nil), "Last Will")
        }
    }
}
