import DBus

extension SimulatorCore {
    /// A registered `org.bluez.Agent1`: its owner, path and IO capability.
    struct Agent: Sendable, Equatable {
        var owner: BusName
        var path: ObjectPath
        var capability: String
    }

    /// How the two sides authenticate, from their IO capabilities (LE
    /// Secure Connections; Core Specification Vol 3, Part H, 2.3.5.1,
    /// with the simulator's adapter as the initiator).
    enum PairingMethod: Equatable {
        /// No question: bluetoothd accepts the Just Works confirmation
        /// itself for a bonding its client requested (src/device.c,
        /// `device_confirm_passkey`).
        case justWorks
        /// Both show a passkey; the agent is asked `RequestConfirmation`.
        case numericComparison
        /// The device shows a passkey; the agent is asked `RequestPasskey`.
        case passkeyEntry
        /// The agent is told `DisplayPasskey`; the device types it.
        case passkeyDisplay
    }

    static func method(local: String, remote: String) -> PairingMethod {
        switch (local, remote) {
        case ("NoInputNoOutput", _), (_, "NoInputNoOutput"), ("", _): .justWorks
        case ("DisplayOnly", "DisplayOnly"), ("DisplayOnly", "DisplayYesNo"), ("DisplayYesNo", "DisplayOnly"): .justWorks
        case ("DisplayOnly", _), ("DisplayYesNo", "KeyboardOnly"), ("KeyboardDisplay", "KeyboardOnly"): .passkeyDisplay
        case ("DisplayYesNo", _), ("KeyboardDisplay", "DisplayYesNo"), ("KeyboardDisplay", "KeyboardDisplay"):
            .numericComparison
        default: .passkeyEntry
        }
    }

    /// The agent bluetoothd asks on behalf of a client: its own, else the
    /// default agent (src/agent.c, `agent_get`).
    func agent(for client: BusName?) -> Agent? {
        if let client, let own = agents[client] { return Agent(owner: client, path: own.path, capability: own.capability) }
        guard let owner = defaultAgent, let agent = agents[owner] else { return nil }
        return Agent(owner: owner, path: agent.path, capability: agent.capability)
    }

    /// The part of the exchange that may involve the agent. Without an
    /// agent bluetoothd pairs as NoInputNoOutput (Just Works).
    func authenticate(_ device: DeviceState, agent: Agent?, generation: UInt64) async throws(DBusError) {
        let spec = device.spec.pairing
        guard spec.responds else {
            await sleep(scaled: spec.timeout)
            guard device.connected, device.connectionGeneration == generation else {
                throw BluetoothdError.authenticationCanceled
            }
            throw BluetoothdError.authenticationTimeout
        }
        // A device that refuses pairing does so before any question.
        guard spec.accept, let agent else { return }
        let passkey = spec.passkey ?? UInt32.random(in: 0...999_999)
        let devicePath = Value.objectPath(device.path)
        switch Self.method(local: agent.capability, remote: spec.ioCapability) {
        case .justWorks:
            return
        case .numericComparison:
            _ = try await ask(agent, "RequestConfirmation", [devicePath, .uint32(passkey)], device, generation)
        case .passkeyEntry:
            let reply = try await ask(agent, "RequestPasskey", [devicePath], device, generation)
            guard reply.first?.uint32 == passkey else { throw BluetoothdError.authenticationFailed }
        case .passkeyDisplay:
            let shown = UInt32.random(in: 0...999_999)
            _ = try await ask(agent, "DisplayPasskey", [devicePath, .uint32(shown), .uint16(0)], device, generation)
            // The device types what the agent's user reads to them.
            await sleep(scaled: spec.delay)
            if spec.entersWrongPasskey { throw BluetoothdError.authenticationFailed }
        }
    }

    /// One question to the agent. Its refusal (or no reply within
    /// bluetoothd's 60 s) fails the pairing as the kernel reports a
    /// negative reply: `AuthenticationFailed`; a pairing cancelled
    /// meanwhile fails with `AuthenticationCanceled`.
    private func ask(
        _ agent: Agent, _ method: MemberName, _ arguments: [Value], _ device: DeviceState, _ generation: UInt64
    ) async throws(DBusError) -> [Value] {
        device.askedAgent = agent
        let result: Result<[Value], DBusError>
        do {
            result = .success(
                try await bus.call(
                    destination: agent.owner, path: agent.path, interface: Self.agentInterface, method: method,
                    arguments: arguments, timeout: Self.agentTimeout))
        } catch let error as DBusError {
            result = .failure(error)
        } catch {
            result = .failure(DBusError(.failed, "\(error)"))
        }
        if device.askedAgent == agent { device.askedAgent = nil }
        guard device.connected, device.connectionGeneration == generation else {
            throw BluetoothdError.authenticationCanceled
        }
        switch result {
        case .success(let values): return values
        case .failure(let error):
            if error.isNoReply { cancelQuestion(agent) }
            throw BluetoothdError.authenticationFailed
        }
    }

    /// `Agent1.Cancel`: the question in flight is void.
    func cancelQuestion(_ agent: Agent) {
        let bus = self.bus
        Task {
            _ = try? await bus.call(
                destination: agent.owner, path: agent.path, interface: Self.agentInterface, method: "Cancel",
                timeout: .seconds(5))
        }
    }

    static let agentInterface: InterfaceName = "org.bluez.Agent1"
    /// bluetoothd's agent request timeout (src/agent.c).
    static let agentTimeout: Duration = .seconds(60)
}
