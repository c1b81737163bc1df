import DBus

extension PairingAgent {
    /// `org.bluez.Agent1`'s methods, as bluetoothd 5.66 calls them.
    var interface: ExportedInterface {
        let device = ExportedInterface.Argument("device", .objectPath)
        return ExportedInterface(
            "org.bluez.Agent1",
            methods: [
                .init("Release") { [weak self] _ in
                    self?.state.withLock { $0.registered = false }
                    return []
                },
                .init("RequestPinCode", inputs: [device], outputs: [.init("pincode", .string)]) { [weak self] call in
                    let answer = try await self?.ask(call, .pinCode)
                    guard case .pinCode(let pin)? = answer else { throw Self.refusal(answer) }
                    return [.string(pin)]
                },
                .init("DisplayPinCode", inputs: [device, .init("pincode", .string)]) { [weak self] call in
                    try await self?.tell(call, .displayPinCode(call.arguments[1].string ?? ""))
                    return []
                },
                .init("RequestPasskey", inputs: [device], outputs: [.init("passkey", .uint32)]) { [weak self] call in
                    let answer = try await self?.ask(call, .passkey)
                    guard case .passkey(let passkey)? = answer else { throw Self.refusal(answer) }
                    return [.uint32(passkey)]
                },
                .init("DisplayPasskey", inputs: [device, .init("passkey", .uint32), .init("entered", .uint16)]) {
                    [weak self] call in
                    let passkey = call.arguments[1].uint32 ?? 0
                    try await self?.tell(call, .displayPasskey(passkey, entered: call.arguments[2].uint16 ?? 0))
                    return []
                },
                .init("RequestConfirmation", inputs: [device, .init("passkey", .uint32)]) { [weak self] call in
                    try await self?.consent(call, .confirmation(call.arguments[1].uint32 ?? 0))
                    return []
                },
                .init("RequestAuthorization", inputs: [device]) { [weak self] call in
                    try await self?.consent(call, .authorization)
                    return []
                },
                .init("AuthorizeService", inputs: [device, .init("uuid", .string)]) { [weak self] call in
                    try await self?.consent(call, .serviceAuthorization(call.arguments[1].string ?? ""))
                    return []
                },
                .init("Cancel") { [weak self] _ in
                    self?.cancelPending()
                    return []
                },
            ])
    }

    /// Only bluetoothd may ask: any other client on the bus could
    /// otherwise make the gateway publish questions of its own.
    private func checkCaller(_ call: MethodCall) async throws(DBusError) {
        let owner = try? await central.connection.nameOwner(ObjectManager.bluez)
        guard let sender = call.sender, let owner, sender == owner else {
            throw DBusError(Self.rejected, "only bluetoothd asks this agent")
        }
    }

    /// A question whose answer must be `.accept`.
    private func consent(_ call: MethodCall, _ kind: PairingRequest.Kind) async throws {
        try await checkCaller(call)
        let request = try self.request(call, kind)
        if configuration.acceptsLocalAdapters, isLocalAdapter(request.device) { return }
        let answer = await answer(request)
        guard answer == .accept else { throw Self.refusal(answer) }
    }

    /// A question whose answer carries a value.
    private func ask(_ call: MethodCall, _ kind: PairingRequest.Kind) async throws -> PairingAnswer {
        try await checkCaller(call)
        return await answer(try request(call, kind))
    }

    /// Information: replied to at once, handed to the handler meanwhile.
    private func tell(_ call: MethodCall, _ kind: PairingRequest.Kind) async throws {
        try await checkCaller(call)
        let request = try request(call, kind)
        let handler = self.handler
        Task { _ = await handler(request) }
    }

    /// Runs the handler in a task that `Cancel` (or the caller giving up)
    /// cancels.
    func answer(_ request: PairingRequest) async -> PairingAnswer {
        let handler = self.handler
        let task = Task { await handler(request) }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            state.pending[state.nextID] = task
            return state.nextID
        }
        defer { _ = state.withLock { $0.pending.removeValue(forKey: id) } }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// bluetoothd's `Cancel`: the request it sent last is void.
    func cancelPending() {
        let pending = state.withLock { Array($0.pending.values) }
        for task in pending { task.cancel() }
    }

    private func request(_ call: MethodCall, _ kind: PairingRequest.Kind) throws(DBusError) -> PairingRequest {
        guard let path = call.arguments.first?.objectPath,
            let address = try? BluetoothAddress(objectPathElement: String(path.lastElement)),
            let adapter = path.parent.map({ String($0.lastElement) })
        else {
            throw DBusError(Self.rejected, "not a device object path")
        }
        return PairingRequest(adapter: adapter, device: address, kind: kind)
    }

    private func isLocalAdapter(_ address: BluetoothAddress) -> Bool {
        central.adapters().contains { $0.address == address }
    }

    static func refusal(_ answer: PairingAnswer?) -> DBusError {
        switch answer {
        case .cancel?, nil: DBusError(canceled, "Canceled")
        default: DBusError(rejected, "Rejected")
        }
    }
}
