import AsyncPrimitives
import DBus

// What bluetoothd asks of an application's characteristics on behalf of
// centrals: ReadValue, WriteValue, StartNotify, StopNotify, Confirm.

extension Peripheral {
    /// Answers a delegated request (`PeripheralEvent.request`). Throws
    /// `.notFound` when there is no such request waiting (unknown, already
    /// answered, or expired).
    public func respond(to id: String, with answer: RequestAnswer) throws(BlueZError) {
        if case .attError(let code) = answer, !LocalGATT.canSend(code) {
            throw BlueZError(
                .invalidArguments,
                "bluetoothd can send the ATT errors 0x02, 0x03, 0x06, 0x07, 0x08, 0x0d, 0x0e and 0x80-0x9f, not 0x\(String(code, radix: 16))")
        }
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: id) }),
            pending.promise.resolve(.success(answer))
        else { throw BlueZError(.notFound, "no request \(id) is waiting for an answer (unknown, answered or expired)") }
    }

    /// The requests waiting for an answer.
    public func pendingRequests() -> [DelegatedRequest] {
        state.withLock { $0.pending.values.map(\.request) }
    }

    func centralRead(_ path: ObjectPath, options: [String: Value]) async throws(DBusError) -> [UInt8] {
        let (access, entry) = try lookUp(path, options: options)
        let offset = options["offset"]?.uint16 ?? 0
        if entry.definition.delegated {
            switch try await delegate(.read, access, offset: offset, value: nil) {
            case .value(let value): return value
            case .attError(let code): throw LocalGATT.error(forATT: code)
            }
        }
        guard Int(offset) <= entry.value.count else { throw LocalGATT.error(forATT: 0x07) }
        emit(.read(access))
        return Array(entry.value[Int(offset)...])
    }

    func centralWrite(_ path: ObjectPath, _ value: [UInt8], options: [String: Value]) async throws(DBusError) {
        let (access, entry) = try lookUp(path, options: options)
        let offset = Int(options["offset"]?.uint16 ?? 0)
        guard offset <= entry.value.count else { throw LocalGATT.error(forATT: 0x07) }
        let stored = Array(entry.value[..<offset]) + value
        if entry.definition.delegated {
            if case .attError(let code) = try await delegate(.write, access, offset: UInt16(offset), value: value) {
                throw LocalGATT.error(forATT: code)
            }
        } else {
            emit(.written(access, value: value))
        }
        state.withLock { state in
            guard let (record, index) = state.characteristic(at: path) else { return }
            state.applications[record.id]?.characteristics[index].value = stored
        }
    }

    func notifyingChanged(_ path: ObjectPath, _ notifying: Bool) {
        let access = state.withLock { state -> AttributeAccess? in
            guard let (record, index) = state.characteristic(at: path),
                record.characteristics[index].notifying != notifying
            else { return nil }
            state.applications[record.id]?.characteristics[index].notifying = notifying
            return record.access(index, device: nil)
        }
        guard let access else { return }
        try? central.connection.objects.update(["Notifying": .boolean(notifying)], of: LocalGATT.characteristic, at: path)
        emit(notifying ? .subscribed(access) : .unsubscribed(access))
        if !notifying {
            let waiting = state.withLock { $0.confirmations.removeValue(forKey: path) ?? [] }
            for promise in waiting { promise.resolve(.success(())) }
        }
    }

    func confirmed(_ path: ObjectPath) {
        let promise = state.withLock { state -> Promise<Void, BlueZError>? in
            guard var waiting = state.confirmations[path], !waiting.isEmpty else { return nil }
            let first = waiting.removeFirst()
            state.confirmations[path] = waiting
            return first
        }
        promise?.resolve(.success(()))
    }

    /// The characteristic at `path` and who asks; a central seen for the
    /// first time is reported.
    private func lookUp(_ path: ObjectPath, options: [String: Value]) throws(DBusError)
        -> (AttributeAccess, CharacteristicRecord)
    {
        let device = options["device"]?.objectPath.flatMap { try? BluetoothAddress(objectPathElement: String($0.lastElement)) }
        let found = state.withLock { state -> (AttributeAccess, CharacteristicRecord, Bool)? in
            guard let (record, index) = state.characteristic(at: path) else { return nil }
            var firstSeen = false
            if let device, !record.seen.contains(device) {
                state.applications[record.id]?.seen.insert(device)
                firstSeen = true
            }
            return (record.access(index, device: device), record.characteristics[index], firstSeen)
        }
        guard let (access, entry, firstSeen) = found else { throw DBusError(.unknownObject, "no characteristic at \(path)") }
        if firstSeen, let device {
            emit(.centralSeen(application: access.application, adapter: access.adapter, device: device))
        }
        return (access, entry)
    }

    /// Publishes a request and waits for its answer until the deadline;
    /// unanswered, the central gets "Unlikely Error".
    private func delegate(_ kind: DelegatedRequest.Kind, _ access: AttributeAccess, offset: UInt16, value: [UInt8]?)
        async throws(DBusError) -> RequestAnswer
    {
        let promise = Promise<RequestAnswer, BlueZError>()
        let deadline = ContinuousClock.now + options.requestTimeout
        let milliseconds = options.requestTimeout.milliseconds
        let request = state.withLock { state -> DelegatedRequest in
            state.nextRequest += 1
            let request = DelegatedRequest(
                id: "req\(state.nextRequest)", kind: kind, access: access, offset: offset, value: value,
                deadline: deadline, timeoutMilliseconds: milliseconds)
            state.pending[request.id] = PendingRequest(request: request, promise: promise)
            return request
        }
        emit(.request(request))
        let outcome = await promise.wait(
            deadline: deadline, timeout: BlueZError(.timeout, "no answer in time"),
            cancelled: BlueZError(.cancelled, "cancelled"))
        state.withLock { _ = $0.pending.removeValue(forKey: request.id) }
        switch outcome {
        case .success(let answer): return answer
        case .failure:
            emit(.requestExpired(id: request.id, access))
            throw LocalGATT.error(forATT: PeripheralState.unlikelyError)
        }
    }
}
