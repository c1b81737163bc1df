import DBus

extension SimulatorCore {
    // MARK: Clients leaving the bus

    /// Follows NameOwnerChanged so that a client that leaves the bus loses
    /// its discovery session, filter, notification sessions and agent, as
    /// bluetoothd's `g_dbus_add_disconnect_watch` does.
    func watchClients() async throws {
        let stream = try await bus.signals(
            matching: MatchRule(sender: .bus, interface: .bus, member: "NameOwnerChanged"))
        clientWatch = Task { [weak self] in
            do {
                for try await signal in stream {
                    guard signal.body.count == 3, let name = signal.body[0].string, name.hasPrefix(":"),
                        signal.body[2].string == ""
                    else { continue }
                    await self?.clientLeft(BusName(unchecked: name))
                }
            } catch {
                // The connection closed: nothing left to watch.
            }
        }
    }

    func clientLeft(_ client: BusName) {
        for adapter in adapters.values {
            adapter.filters[client] = nil
            if adapter.discoveryClients.remove(client) != nil, !adapter.isDiscovering { discoveryStopped(adapter) }
        }
        for device in devices.values {
            for (index, clients) in device.notifySessions where clients.contains(client) {
                device.notifySessions[index]?.remove(client)
                if device.notifySessions[index]?.isEmpty == true {
                    device.notifySessions[index] = nil
                    setNotifying(device, index, false)
                }
            }
        }
        agents[client] = nil
        if defaultAgent == client { defaultAgent = nil }
        peripheralClientLeft(client)
        monitorClientLeft(client)
    }

    // MARK: AgentManager1

    static let capabilities: Set<String> = [
        "", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay",
    ]

    /// AgentManager1.RegisterAgent (src/agent.c): one agent per client;
    /// pairing in the simulator never needs to ask it (LE Just Works).
    func registerAgent(_ path: ObjectPath, capability: String, sender: BusName?) throws(DBusError) {
        let client = sender ?? BusName(unchecked: ":0.0")
        guard agents[client] == nil else { throw BluetoothdError.alreadyExists }
        guard Self.capabilities.contains(capability) else { throw BluetoothdError.invalidArguments() }
        agents[client] = (path, capability)
    }

    func unregisterAgent(_ path: ObjectPath, sender: BusName?) throws(DBusError) {
        let client = sender ?? BusName(unchecked: ":0.0")
        guard let agent = agents[client], agent.path == path else {
            throw BluetoothdError.doesNotExist
        }
        agents[client] = nil
        if defaultAgent == client { defaultAgent = nil }
    }

    func requestDefaultAgent(_ path: ObjectPath, sender: BusName?) throws(DBusError) {
        let client = sender ?? BusName(unchecked: ":0.0")
        guard let agent = agents[client], agent.path == path else {
            throw BluetoothdError.doesNotExist
        }
        defaultAgent = client
    }
}
