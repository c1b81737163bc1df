import CMosquitto

// Publishing, the outbox, and subscriptions. Called from any thread (and,
// for draining and re-subscribing, from the loop thread's callbacks).
extension ClientCore {
    func publish(_ message: OutgoingMessage) throws -> PublishOutcome {
        guard cmosq_pub_topic_check(message.topic) == CMOSQ_ERR_SUCCESS else {
            throw MQTTError(.invalidArgument, "not a topic to publish to: \(message.topic)")
        }
        guard message.payload.count <= 268_435_455 else {
            throw MQTTError(.invalidArgument, "an MQTT payload is at most 268,435,455 bytes")
        }
        return try state.withLock { state throws -> PublishOutcome in
            guard !state.stopRequested else { throw MQTTError(.stopped, "the MQTT client was stopped") }
            if message.qos == .atMostOnce {
                guard state.connection == .connected else {
                    state.statistics.droppedWhileDisconnected += 1
                    return .dropped
                }
                let (result, _) = try send(message)
                if result == CMOSQ_ERR_NO_CONN || result == CMOSQ_ERR_CONN_LOST {
                    state.statistics.droppedWhileDisconnected += 1
                    return .dropped
                }
                guard result == CMOSQ_ERR_SUCCESS else { throw MQTTError.library(result, "publish") }
                state.statistics.published += 1
                return .sent
            }
            if state.outbox.isEmpty && state.inFlight.count < configuration.inFlightLimit {
                let (result, messageID) = try send(message)
                // NO_CONN for QoS 1/2: libmosquitto has queued the message
                // and sends it after the next CONNACK.
                guard result == CMOSQ_ERR_SUCCESS || result == CMOSQ_ERR_NO_CONN else {
                    throw MQTTError.library(result, "publish")
                }
                state.inFlight.insert(messageID)
                state.statistics.published += 1
                return .sent
            }
            let evicted = state.outbox.append(message)
            return evicted == nil ? .queued : .queuedDroppingOldest
        }
    }

    /// Hands outbox messages to libmosquitto while the in-flight window has
    /// room (called with `state` held).
    func drainOutbox(_ state: inout State) {
        while state.inFlight.count < configuration.inFlightLimit, let next = state.outbox.popFirst() {
            guard let (result, messageID) = try? send(next),
                result == CMOSQ_ERR_SUCCESS || result == CMOSQ_ERR_NO_CONN
            else {
                state.statistics.rejected += 1
                continue
            }
            state.inFlight.insert(messageID)
            state.statistics.published += 1
        }
    }

    /// `mosquitto_publish_v5`; returns its result and the message id.
    private func send(_ message: OutgoingMessage) throws -> (Int32, Int32) {
        var messageID: Int32 = 0
        let properties = configuration.protocolVersion == .v5 ? message.properties : MessageProperties()
        let result = try PropertyList.with(properties) { list in
            message.payload.withUnsafeBytes { bytes in
                cmosq_publish_v5(
                    handle, &messageID, message.topic, Int32(bytes.count), bytes.baseAddress,
                    Int32(message.qos.rawValue), message.retain, list)
            }
        }
        wakeIfWriting()
        return (result, messageID)
    }

    var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.inFlight = state.inFlight.count
            statistics.queued = state.outbox.count
            statistics.droppedFromOutbox = state.outbox.dropped
            return statistics
        }
    }

    var connection: ConnectionState { state.withLock { $0.connection } }

    // MARK: Subscriptions

    func subscribe(
        _ filter: String, qos: QoS, waitForAcknowledgement: Bool, handler: @escaping @Sendable (Message) -> Void
    ) async throws -> Subscription {
        guard cmosq_sub_topic_check(filter) == CMOSQ_ERR_SUCCESS else {
            throw MQTTError(.invalidArgument, "not a topic filter: \(filter)")
        }
        let id = try state.withLock { state throws -> Int in
            guard !state.stopRequested else { throw MQTTError(.stopped, "the MQTT client was stopped") }
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            state.subscriptions[id] = SubscriptionEntry(filter: filter, qos: qos, handler: handler)
            // When not connected, the next CONNACK subscribes.
            if state.connection == .connected { sendSubscribe(&state, id: id) }
            return id
        }
        if waitForAcknowledgement {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    guard let entry = state.subscriptions[id] else {
                        let stopped = state.stopRequested || state.connection == .stopped
                        continuation.resume(
                            throwing: stopped
                                ? MQTTError(.stopped, "the MQTT client was stopped")
                                : MQTTError(.subscriptionRefused, "the broker refused the subscription to \(filter)"))
                        return
                    }
                    if state.connection == .stopped {
                        continuation.resume(throwing: MQTTError(.stopped, "the MQTT client was stopped"))
                    } else if entry.acknowledged {
                        continuation.resume()
                    } else {
                        state.subscriptions[id]?.waiters.append(continuation)
                    }
                }
            }
        }
        return Subscription(filter: filter, id: id)
    }

    /// SUBSCRIBE for one entry (called with `state` held).
    func sendSubscribe(_ state: inout State, id: Int) {
        guard let entry = state.subscriptions[id] else { return }
        var messageID: Int32 = 0
        var properties: OpaquePointer? = nil
        defer { cmosq_property_free_all(&properties) }
        if state.subscriptionIdentifiersAvailable {
            let identifier = Self.identifier(of: entry.filter, in: &state)
            _ = cmosq_property_add_varint(&properties, CMOSQ_PROP_SUBSCRIPTION_IDENTIFIER, identifier)
        }
        let result = cmosq_subscribe_v5(
            handle, &messageID, entry.filter, Int32(entry.qos.rawValue), 0, properties)
        wakeIfWriting()
        // NO_CONN: the connection just went; the next CONNACK subscribes.
        if result == CMOSQ_ERR_SUCCESS { state.pendingSubscribes[messageID, default: []].append(id) }
    }

    /// The subscription identifier of `filter`: the one it was given, else
    /// the next (1 and up; MQTT 5 allows up to 268,435,455, far more
    /// filters than a client makes).
    static func identifier(of filter: String, in state: inout State) -> UInt32 {
        if let known = state.filterIdentifiers[filter] { return known }
        let identifier = UInt32(state.filterIdentifiers.count + 1)
        state.filterIdentifiers[filter] = identifier
        state.identifiedFilters[identifier] = filter
        return identifier
    }

    func unsubscribe(_ subscription: Subscription) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard let entry = state.subscriptions.removeValue(forKey: subscription.id) else { return [] }
            let stillWanted = state.subscriptions.values.contains { $0.filter == entry.filter }
            if !stillWanted && state.connection == .connected {
                cmosq_unsubscribe_v5(handle, nil, entry.filter, nil)
                wakeIfWriting()
            }
            return entry.waiters
        }
        for waiter in waiters { waiter.resume(throwing: MQTTError(.stopped, "unsubscribed")) }
    }
}
