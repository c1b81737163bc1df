import AsyncPrimitives
import CMosquitto
import Glibc

// The loop thread: connect, run, reconnect with backoff, stop.
extension ClientCore {
    /// Starts the loop thread (once; later calls do nothing).
    func start() {
        let first = state.withLock { state -> Bool in
            guard !state.started, !state.stopRequested else { return false }
            state.started = true
            return true
        }
        guard first else { return }
        // The thread holds a strong reference until it ends, so callbacks
        // (which find `self` through the unretained user-data pointer) never
        // outlive it.
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let core = Unmanaged<ClientCore>.fromOpaque(argument).takeRetainedValue()
            core.runLoop()
            return nil
        }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        state.withLock { $0.thread = thread }
    }

    /// Asks the loop thread to disconnect cleanly (the broker discards the
    /// Will) and to end, and waits until it has.
    func stop() async {
        let thread = state.withLock { $0.thread }
        requestStop()
        guard thread != nil else {
            finish()
            return
        }
        while !loopFinished.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // The thread has returned from its body, or is about to: joining does
        // not block for long. Of several concurrent `stop()` calls, one joins.
        let toJoin = state.withLock { state in
            defer { state.thread = nil }
            return state.thread
        }
        if let toJoin { pthread_join(toJoin, nil) }
    }

    /// Asks the loop thread to end without waiting for it: sends DISCONNECT
    /// if connected (and wakes the loop thread's turn, which sends
    /// it again if a connection attempt was in flight) and wakes the wait
    /// between reconnects.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
        cmosq_disconnect_v5(handle, 0, nil)
        wake()
    }

    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeDescriptor, $0.baseAddress, $0.count) }
    }

    private var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// The loop thread's body.
    private func runLoop() {
        cmosq_set_thread_name("mqtt-loop")
        var failures = 0
        let broker = configuration.broker
        while !stopRequested {
            setConnection(.connecting)
            let connectsBefore = state.withLock { $0.statistics.connections }
            var result = connect(broker)
            var unanswered: String?
            if result == CMOSQ_ERR_SUCCESS {
                var disconnectSent = false
                let answerBy = ContinuousClock.now + Self.connectAnswerTimeout
                repeat {
                    if stopRequested && !disconnectSent {
                        cmosq_disconnect_v5(handle, 0, nil)
                        disconnectSent = true
                    }
                    // A short timeout bounds how late a stop request that
                    // raced with a connection attempt is seen.
                    result = turn(timeoutMilliseconds: 250)
                    // A broker (or anything on its port) that took the TCP
                    // connection and never answered CONNECT: try again
                    // rather than wait for ever (the next connect closes
                    // this socket).
                    if result == CMOSQ_ERR_SUCCESS, !stopRequested, ContinuousClock.now > answerBy,
                        state.withLock({ $0.statistics.connections }) == connectsBefore
                    {
                        unanswered = "no CONNACK within \(Self.connectAnswerTimeout)"
                        break
                    }
                } while result == CMOSQ_ERR_SUCCESS
            }
            if stopRequested { break }
            let reason = unanswered ?? libraryErrorText(result)
            state.withLock { state in
                if case .disconnected = state.connection { return }
                transition(&state, to: .disconnected(reason: reason))
            }
            let connected = state.withLock { $0.statistics.connections } > connectsBefore
            failures = connected ? 0 : failures + 1
            waitBeforeReconnecting(attempt: failures)
        }
        finish()
        loopFinished.store(true, ordering: .releasing)
    }

    /// One turn of a connection: waits for the socket or a wake-up, then
    /// reads, writes and keeps the connection alive. It waits with poll, not
    /// with libmosquitto's `mosquitto_loop`: that one waits with select and
    /// refuses a socket numbered 1024 or more (`MOSQ_ERR_INVAL`), which a
    /// gateway holding a thousand HTTP streams opens, so the client would
    /// never connect.
    private func turn(timeoutMilliseconds: Int32) -> Int32 {
        let socket = cmosq_socket(handle)
        guard socket >= 0 else { return CMOSQ_ERR_NO_CONN }
        let pending = Int16(cmosq_want_write(handle) ? POLLIN | POLLOUT : POLLIN)
        var descriptors = (
            pollfd(fd: socket, events: pending, revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        )
        let count = withUnsafeMutableBytes(of: &descriptors) { bytes in
            poll(bytes.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, timeoutMilliseconds)
        }
        if count < 0 && errno != EINTR { return CMOSQ_ERR_ERRNO }
        if descriptors.1.revents != 0 {
            var drained: UInt64 = 0
            _ = withUnsafeMutableBytes(of: &drained) { read(wakeDescriptor, $0.baseAddress, $0.count) }
        }
        if descriptors.0.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            let reading = cmosq_loop_read(handle, 1)
            guard reading == CMOSQ_ERR_SUCCESS, cmosq_socket(handle) >= 0 else { return reading }
        }
        // What other threads queued since the wait began, or the rest of a
        // packet the socket took only part of.
        if cmosq_want_write(handle) {
            let writing = cmosq_loop_write(handle, 1)
            guard writing == CMOSQ_ERR_SUCCESS, cmosq_socket(handle) >= 0 else { return writing }
        }
        return cmosq_loop_misc(handle)
    }

    /// Wakes a turn that waits while a packet is left to write: libmosquitto
    /// writes what other threads publish at once, and leaves the rest of a
    /// packet the socket did not take for the loop thread.
    func wakeIfWriting() {
        if cmosq_want_write(handle) { wake() }
    }

    /// The client is stopped: observers end, waiting subscribers fail.
    private func finish() {
        let (observers, waiters) = state.withLock { state in
            transition(&state, to: .stopped)
            defer { state.observers.removeAll() }
            var waiters: [CheckedContinuation<Void, any Error>] = []
            for id in state.subscriptions.keys {
                waiters += state.subscriptions[id]?.waiters ?? []
                state.subscriptions[id]?.waiters = []
            }
            return (Array(state.observers.values), waiters)
        }
        for observer in observers { observer.finish() }
        for waiter in waiters { waiter.resume(throwing: MQTTError(.stopped, "the MQTT client was stopped")) }
    }

    /// How long a connection may wait for the broker's CONNACK.
    static let connectAnswerTimeout: Duration = .seconds(10)

    /// `mosquitto_connect_bind_v5`: a blocking connect, TLS handshake and
    /// CONNECT (the CONNACK arrives later, in a turn's `mosquitto_loop_read`).
    private func connect(_ broker: BrokerURL) -> Int32 {
        var list: OpaquePointer? = nil
        defer { cmosq_property_free_all(&list) }
        if configuration.protocolVersion == .v5, let expiry = configuration.sessionExpiryInterval {
            let added = cmosq_property_add_int32(&list, CMOSQ_PROP_SESSION_EXPIRY_INTERVAL, expiry)
            guard added == CMOSQ_ERR_SUCCESS else { return added }
        }
        if configuration.protocolVersion == .v5, let size = configuration.maximumPacketSize {
            let added = cmosq_property_add_int32(&list, CMOSQ_PROP_MAXIMUM_PACKET_SIZE, size)
            guard added == CMOSQ_ERR_SUCCESS else { return added }
        }
        return cmosq_connect_bind_v5(
            handle, broker.host, Int32(broker.port), Int32(configuration.keepAlive), nil, list)
    }

    /// Sleeps the backoff delay (doubling per failed attempt, capped), or
    /// until `stop()` wakes the thread.
    private func waitBeforeReconnecting(attempt: Int) {
        var delay = configuration.reconnectDelay
        for _ in 0..<max(0, attempt - 1) where delay < configuration.maximumReconnectDelay {
            delay *= 2
        }
        delay = min(delay, configuration.maximumReconnectDelay)
        let milliseconds = Int32(clamping: delay.milliseconds)
        var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, max(milliseconds, 0))
        var drained: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &drained) { read(wakeDescriptor, $0.baseAddress, $0.count) }
    }

    // MARK: State observers

    func setConnection(_ connection: ConnectionState) {
        state.withLock { transition(&$0, to: connection) }
    }

    /// Records a new connection state and tells the observers (called with
    /// `state` held; yielding to an AsyncStream does not block).
    func transition(_ state: inout State, to connection: ConnectionState) {
        guard state.connection != connection, state.connection != .stopped else { return }
        state.connection = connection
        for observer in state.observers.values { observer.yield(connection) }
    }

    func observe() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream<ConnectionState>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> Int? in
            continuation.yield(state.connection)
            guard state.connection != .stopped else { return nil }
            let id = state.nextObserverID
            state.nextObserverID += 1
            state.observers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        // The termination handler must not wait for `state`: when the
        // consumer's task is cancelled, it runs while the Swift runtime holds
        // that task's status lock, and the loop thread, which yields to this
        // stream with `state` held, needs that status lock to wake the task.
        // Waiting here would deadlock both threads; a yield to a finished
        // stream in the meantime is harmless.
        continuation.onTermination = { [weak self] _ in
            Task { _ = self?.state.withLock { $0.observers.removeValue(forKey: id) } }
        }
        return stream
    }

}
