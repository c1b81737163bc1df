import CMosquitto

// libmosquitto's callbacks. All of them run on the loop thread, inside
// a turn's `mosquitto_loop_read` or `_write`, with libmosquitto's
// callback_mutex held.
extension ClientCore {
    func installCallbacks() {
        cmosq_connect_v5_callback_set(handle) { _, context, result, _, properties in
            ClientCore.from(context)?.connected(result: result, properties: properties)
        }
        cmosq_disconnect_v5_callback_set(handle) { _, context, result, _ in
            ClientCore.from(context)?.disconnected(result: result)
        }
        cmosq_publish_v5_callback_set(handle) { _, context, messageID, reasonCode, _ in
            ClientCore.from(context)?.acknowledged(messageID: messageID, reasonCode: reasonCode)
        }
        cmosq_message_v5_callback_set(handle) { _, context, message, properties in
            guard let message else { return }
            ClientCore.from(context)?.received(message.pointee, properties: properties)
        }
        cmosq_subscribe_v5_callback_set(handle) { _, context, messageID, count, granted, _ in
            let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
            ClientCore.from(context)?.subscribed(messageID: messageID, grantedQoS: codes)
        }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> ClientCore? {
        context.map { Unmanaged<ClientCore>.fromOpaque($0).takeUnretainedValue() }
    }

    /// CONNACK: on success, subscribe again to every filter (the broker kept
    /// no session) and move queued messages on.
    private func connected(result: Int32, properties: OpaquePointer?) {
        let identifiers = configuration.protocolVersion == .v5 && PropertyList.subscriptionIdentifiersAvailable(properties)
        state.withLock { state in
            guard result == 0 else {
                let text =
                    configuration.protocolVersion == .v5
                    ? cmosq_reason_string(result).map { String(cString: $0) }
                    : cmosq_connack_string(result).map { String(cString: $0) }
                transition(&state, to: .disconnected(reason: "broker refused the connection: \(text ?? "code \(result)")"))
                return
            }
            state.statistics.connections += 1
            state.subscriptionIdentifiersAvailable = identifiers
            transition(&state, to: .connected)
            state.pendingSubscribes.removeAll()
            for id in state.subscriptions.keys.sorted() { sendSubscribe(&state, id: id) }
            drainOutbox(&state)
        }
    }

    private func disconnected(result: Int32) {
        state.withLock { state in
            guard !state.stopRequested else { return }
            let reason = result == 0 ? "disconnected" : libraryErrorText(result)
            transition(&state, to: .disconnected(reason: reason))
        }
    }

    /// PUBACK (QoS 1) or PUBCOMP (QoS 2) for one of ours, or a QoS 0 message
    /// written (whose id is not in `inFlight`).
    private func acknowledged(messageID: Int32, reasonCode: Int32) {
        state.withLock { state in
            guard state.inFlight.remove(messageID) != nil else { return }
            if reasonCode >= 0x80 {
                state.statistics.rejected += 1
            } else {
                state.statistics.acknowledged += 1
            }
            drainOutbox(&state)
        }
    }

    private func received(_ raw: mosquitto_message, properties: OpaquePointer?) {
        guard let topicPointer = raw.topic else { return }
        let payload: [UInt8] =
            raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(raw.payloadlen))) } ?? []
        let message = Message(
            topic: String(cString: topicPointer), payload: payload, qos: QoS(rawValue: Int(raw.qos)) ?? .atMostOnce,
            retain: raw.retain, properties: PropertyList.read(properties))
        let identifiers = PropertyList.subscriptionIdentifiers(properties)
        let handlers = state.withLock { state in
            state.statistics.received += 1
            // The broker sends a message once for each of the client's
            // subscriptions it matches (MQTT 5, 3.3.4: overlapping
            // subscriptions, as `a/+/c` and `a/b/c`), each copy naming the
            // subscriptions it is for. So a copy goes only to the handlers of
            // the filters it names, and each handler gets the message once.
            // Without identifiers (MQTT 3.1.1, a broker without them) every
            // matching handler gets every copy.
            let filters = Set(identifiers.compactMap { state.identifiedFilters[$0] })
            return state.subscriptions.sorted { $0.key < $1.key }.compactMap { _, entry in
                if !identifiers.isEmpty { return filters.contains(entry.filter) ? entry.handler : nil }
                var matches = false
                cmosq_topic_matches_sub(entry.filter, message.topic, &matches)
                return matches ? entry.handler : nil
            }
        }
        for handler in handlers { handler(message) }
    }

    private func subscribed(messageID: Int32, grantedQoS: [Int32]) {
        let resumes = state.withLock { state -> [(CheckedContinuation<Void, any Error>, MQTTError?)] in
            guard let ids = state.pendingSubscribes.removeValue(forKey: messageID) else { return [] }
            var resumes: [(CheckedContinuation<Void, any Error>, MQTTError?)] = []
            for (index, id) in ids.enumerated() {
                guard var entry = state.subscriptions[id] else { continue }
                let code = index < grantedQoS.count ? grantedQoS[index] : 0x80
                if code >= 0x80 {
                    let error = MQTTError(.subscriptionRefused, "the broker refused the subscription to \(entry.filter)")
                    resumes += entry.waiters.map { ($0, error) }
                    state.subscriptions[id] = nil
                } else {
                    entry.acknowledged = true
                    resumes += entry.waiters.map { ($0, nil) }
                    entry.waiters = []
                    state.subscriptions[id] = entry
                }
            }
            return resumes
        }
        for (waiter, error) in resumes {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }
}
