import BlueZ

// Pairing: the gateway's own pairings, the agent's questions and their
// answers, and bluetoothd's pairings on its own, each published as a
// `PairingEvent`.
extension GatewayCore {
    /// Pairs, publishing the outcome (`.succeeded` or `.failed`). A pairing
    /// bluetoothd failed because the gateway's agent said no (a client
    /// rejected the question, or nobody answered it in time) fails with
    /// `.pairingRejected`, saying so.
    public func pair(_ command: PairCommand) async throws(GatewayCommandError) -> Device {
        let address = command.device.address
        let adapter = adapter(of: command.device)
        // Only this pairing's refusals explain its failure.
        _ = pairingRequests.takeRefusal(address)
        if let known = try? central.device(address, adapter: adapter) { pairingWatch.gatewayPairs(address, adapter: known.adapter) }
        do {
            let device = try await central.pair(address, adapter: adapter, timeout: command.timeout ?? defaultTimeout)
            pairingWatch.gatewayPaired(device)
            publish(.pairing(.succeeded(device)))
            return device
        } catch {
            if let now = try? central.device(address, adapter: adapter) { pairingWatch.gatewayPaired(now) }
            var failure = error
            // bluetoothd reports the agent's "no" as the kernel does, as a
            // failed authentication: the gateway knows better.
            if [.pairingRejected, .authenticationFailed, .pairingCancelled].contains(error.code),
                let refusal = pairingRequests.takeRefusal(address)
            {
                let detail =
                    switch refusal {
                    case .rejectedByClient: "the pairing request was rejected (POST /v1/pairing-requests/{id})"
                    case .unanswered:
                        "nobody answered the pairing request within \(pairingRequests.deadline) (POST /v1/pairing-requests/{id})"
                    }
                failure = BlueZError(.pairingRejected, detail, dbusName: error.dbusName)
            }
            let adapterName = (try? central.device(address, adapter: adapter).adapter) ?? adapter ?? ""
            publish(.pairing(.failed(adapter: adapterName, address: address, error: .bluez(failure))))
            throw .bluez(failure)
        }
    }

    /// Runs `operation`; under `.auto`, an operation refused for want of
    /// pairing pairs (`pair`, with the operation's timeout) and runs once
    /// more, and that second outcome is the answer.
    func pairingIfRefused<T>(
        _ device: DeviceTarget, _ policy: PairingPolicy, timeout: Duration?,
        _ operation: () async throws(GatewayCommandError) -> T
    ) async throws(GatewayCommandError) -> T {
        let first: Result<T, GatewayCommandError>
        do {
            first = .success(try await operation())
        } catch {
            first = .failure(error)
        }
        guard policy == .auto, case .failure(.bluez(let error)) = first, error.code == .notPaired else {
            return try first.get()
        }
        _ = try await pair(PairCommand(device: device, timeout: timeout))
        return try await operation()
    }

    /// Forgets the device's bond (removes the device), publishing
    /// `.unpaired`.
    public func unpair(_ command: UnpairCommand) async throws(GatewayCommandError) {
        let address = command.device.address
        let adapter = adapter(of: command.device)
        do {
            let device = try central.device(address, adapter: adapter)
            try await central.remove(address, adapter: adapter, timeout: command.timeout)
            publish(.pairing(.unpaired(adapter: device.adapter, address: address)))
        } catch {
            throw .bluez(error)
        }
    }

    /// Sets the device's `trusted` and `blocked` settings that the command
    /// gives, and answers with the device as it now is.
    public func changeDeviceSettings(_ command: ChangeDeviceSettingsCommand) async throws(GatewayCommandError) -> Device {
        do {
            return try await central.setDeviceFlags(
                command.device.address, adapter: adapter(of: command.device), trusted: command.trusted,
                blocked: command.blocked, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }

    /// A client's answer to a question of the agent (see
    /// `PairingRequests.answer`).
    public func answerPairingRequest(_ command: AnswerPairingRequestCommand) throws(GatewayCommandError) {
        try pairingRequests.answer(command.id, with: command.answer)
    }

    /// The agent's questions waiting for an answer.
    public var pendingPairingRequests: [PendingPairingRequest] { pairingRequests.all }

    /// The handler of the gateway's `PairingAgent`: every question is
    /// published and waits for a client's answer, or is rejected after the
    /// core's `pairingRequests.deadline`.
    public func answerAgent(_ request: PairingRequest) async -> PairingAnswer {
        await pairingRequests.handle(request)
    }

    /// Follows a central event for pairings bluetoothd makes on its own
    /// (see `PairingWatch`), publishing `.succeeded` for each.
    public func noticePairing(_ event: CentralEvent) {
        if let device = pairingWatch.newlyPaired(event) { publish(.pairing(.succeeded(device))) }
    }

    /// Publishes `event` to the event log and the observer (nowhere
    /// without them).
    func publish(_ event: CoreEvent) {
        events.publish(event)
    }
}
