/// Turns a composed YAML document into a `Scenario`, checking every value
/// and refusing unknown keys (see docs/scenarios.md for the format).
struct ScenarioParser {
    func scenario(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario {
        let keys = try cursor.mapping(allowed: ["timing", "connectedSignal", "experimental", "adapters", "devices"])
        var scenario = Scenario(adapters: [], devices: [])
        if let timing = keys["timing"] { scenario.timing = try timing.number() }
        if let signal = keys["connectedSignal"] { scenario.connectedSignal = try connectedSignal(signal) }
        if let experimental = keys["experimental"] { scenario.experimental = try experimental.bool() }
        if let adapters = keys["adapters"] {
            scenario.adapters = try adapters.sequence().enumerated().map { index, item throws(ScenarioError) in
                try adapter(item, index: index)
            }
        }
        if scenario.adapters.isEmpty { scenario.adapters = [Scenario.Adapter()] }
        var ids = Set<String>()
        for (index, adapter) in scenario.adapters.enumerated() where !ids.insert(adapter.id).inserted {
            throw ScenarioError(path: "adapters[\(index)].id", message: "adapter '\(adapter.id)' is given twice")
        }
        if let devices = keys["devices"] {
            var seen = Set<DeviceAddress>()
            for item in try devices.sequence() {
                let parsed = try device(item)
                if let adapter = parsed.adapter, !ids.contains(adapter) {
                    throw item.error("no adapter '\(adapter)' in this scenario")
                }
                for adapter in parsed.heardBy.keys.sorted() where !ids.contains(adapter) {
                    throw item.error("heardBy names no adapter of this scenario: '\(adapter)'")
                }
                guard seen.insert(parsed.address).inserted else {
                    throw item.error("device \(parsed.address) is given twice")
                }
                scenario.devices.append(parsed)
            }
        }
        return scenario
    }

    func connectedSignal(_ cursor: YAMLCursor) throws(ScenarioError) -> SimulatorOptions.ConnectedSignal {
        guard let signal = SimulatorOptions.ConnectedSignal(try cursor.string()) else {
            throw cursor.error("connectedSignal is always, never or a probability from 0 to 1")
        }
        return signal
    }

    func adapter(_ cursor: YAMLCursor, index: Int) throws(ScenarioError) -> Scenario.Adapter {
        let keys = try cursor.mapping(allowed: ["id", "address", "name", "alias", "powered", "discoverable", "pairable"])
        var adapter = Scenario.Adapter(id: "hci\(index)")
        if let id = keys["id"] {
            adapter.id = try id.string()
            guard adapter.id.hasPrefix("hci"), adapter.id.count > 3, adapter.id.dropFirst(3).allSatisfy(\.isNumber)
            else { throw id.error("adapter ids are hci0, hci1, ...") }
        }
        if let address = keys["address"] {
            adapter.address = try address.address()
        } else if let other = DeviceAddress(bytes: [0x00, 0x1A, 0x7D, 0xDA, 0x71, UInt8(truncatingIfNeeded: 0x13 + index)]) {
            adapter.address = other
        }
        if let name = keys["name"] { adapter.name = try name.string() }
        if let alias = keys["alias"] { adapter.alias = try alias.string() }
        if let powered = keys["powered"] { adapter.powered = try powered.bool() }
        if let discoverable = keys["discoverable"] { adapter.discoverable = try discoverable.bool() }
        if let pairable = keys["pairable"] { adapter.pairable = try pairable.bool() }
        return adapter
    }

    func device(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Device {
        let keys = try cursor.mapping(allowed: [
            "address", "addressType", "adapter", "name", "appearance", "icon", "rssi", "rssiJitter", "txPower",
            "advertising", "paired", "trusted", "blocked", "connection", "pairing", "range", "services", "heardBy",
        ])
        guard let addressKey = keys["address"] else { throw cursor.error("a device needs an 'address'") }
        var device = Scenario.Device(address: try addressKey.address())
        if let type = keys["addressType"] {
            let text = try type.string()
            guard let value = Scenario.Device.AddressType(rawValue: text) else {
                throw type.error("addressType is 'public' or 'random', not '\(text)'")
            }
            device.addressType = value
        }
        if let adapter = keys["adapter"] { device.adapter = try adapter.string() }
        if let name = keys["name"] { device.name = try name.string() }
        if let appearance = keys["appearance"] { device.appearance = UInt16(try appearance.integer(in: 0...0xffff)) }
        if let icon = keys["icon"] { device.icon = try icon.string() }
        if let rssi = keys["rssi"] { device.rssi = Int16(try rssi.integer(in: -127...20)) }
        if let heardBy = keys["heardBy"] { device.heardBy = try self.heardBy(heardBy, adapter: keys["adapter"]) }
        if let jitter = keys["rssiJitter"] { device.rssiJitter = Int16(try jitter.integer(in: 0...60)) }
        if let power = keys["txPower"] { device.txPower = Int16(try power.integer(in: -127...127)) }
        if let advertising = keys["advertising"] { device.advertising = try self.advertising(advertising) }
        if let paired = keys["paired"] { device.paired = try paired.bool() }
        if let trusted = keys["trusted"] { device.trusted = try trusted.bool() }
        if let blocked = keys["blocked"] { device.blocked = try blocked.bool() }
        if let connection = keys["connection"] { device.connection = try self.connection(connection) }
        if let pairing = keys["pairing"] { device.pairing = try self.pairing(pairing) }
        if let range = keys["range"] { device.range = try self.range(range) }
        if let services = keys["services"] {
            device.services = try services.sequence().map { item throws(ScenarioError) in try service(item) }
        }
        return device
    }

    /// `heardBy`: adapter id → RSSI (dBm), at least one entry; `adapter`
    /// alongside it would say the same thing twice, so it is refused.
    func heardBy(_ cursor: YAMLCursor, adapter: YAMLCursor?) throws(ScenarioError) -> [String: Int16] {
        if adapter != nil { throw cursor.error("give either 'adapter' or 'heardBy', not both") }
        var heard: [String: Int16] = [:]
        for (key, value) in try cursor.pairs() {
            let id = try key.string()
            guard heard[id] == nil else { throw key.error("adapter '\(id)' is given twice") }
            heard[id] = Int16(try value.integer(in: -127...20))
        }
        guard !heard.isEmpty else { throw cursor.error("heardBy needs at least one adapter: {hci0: -50, hci1: -70}") }
        return heard
    }

    func advertising(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Advertising {
        let keys = try cursor.mapping(allowed: [
            "interval", "uuids", "manufacturerData", "serviceData", "flags", "connectable", "counter", "data",
        ])
        var advertising = Scenario.Advertising()
        if let interval = keys["interval"] {
            advertising.interval = try interval.number(minimum: 0.001)
        }
        if let uuids = keys["uuids"] {
            advertising.uuids = try uuids.sequence().map { item throws(ScenarioError) in try item.uuid() }
        }
        if let data = keys["manufacturerData"] {
            for (key, value) in try data.pairs() {
                advertising.manufacturerData[UInt16(try key.integer(in: 0...0xffff))] = try value.bytes()
            }
        }
        if let data = keys["serviceData"] {
            for (key, value) in try data.pairs() { advertising.serviceData[try key.uuid()] = try value.bytes() }
        }
        if let data = keys["data"] {
            for (key, value) in try data.pairs() {
                let type = UInt8(try key.integer(in: 0...0xff))
                guard !Scenario.Advertising.parsedTypes.contains(type) else {
                    throw key.error("AD type \(type) is one bluetoothd parses itself; give it as flags, uuids, name, txPower, appearance, manufacturerData or serviceData")
                }
                advertising.data[type] = try value.bytes()
            }
        }
        if let flags = keys["flags"] { advertising.flags = try flags.bytes() }
        if let connectable = keys["connectable"] { advertising.connectable = try connectable.bool() }
        if let counter = keys["counter"] { advertising.counter = try counter.bool() }
        return advertising
    }

    func connection(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Connection {
        let keys = try cursor.mapping(allowed: ["delay", "resolveDelay", "failures", "error", "mtu"])
        var connection = Scenario.Connection()
        if let delay = keys["delay"] { connection.delay = try delay.number() }
        if let delay = keys["resolveDelay"] { connection.resolveDelay = try delay.number() }
        if let failures = keys["failures"] { connection.failures = try failures.integer(in: 0...1_000_000) }
        // 23 is the least ATT MTU (Core Spec Vol 3, Part F, 3.2.8), 517 the most BlueZ offers.
        if let mtu = keys["mtu"] { connection.mtu = UInt16(try mtu.integer(in: 23...517)) }
        if let error = keys["error"] {
            connection.error = try error.string()
            guard connection.error.hasPrefix("le-connection-") else {
                throw error.error("expected one of bluetoothd's reasons such as 'le-connection-abort-by-local'")
            }
        }
        return connection
    }

    func pairing(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Pairing {
        let keys = try cursor.mapping(allowed: [
            "delay", "accept", "ioCapability", "passkey", "responds", "timeout", "entersWrongPasskey",
        ])
        var pairing = Scenario.Pairing()
        if let delay = keys["delay"] { pairing.delay = try delay.number() }
        if let accept = keys["accept"] { pairing.accept = try accept.bool() }
        if let io = keys["ioCapability"] {
            let text = try io.string()
            guard SimulatorCore.capabilities.contains(text), !text.isEmpty else {
                throw io.error("ioCapability is NoInputNoOutput, DisplayOnly, DisplayYesNo, KeyboardOnly or KeyboardDisplay, not '\(text)'")
            }
            pairing.ioCapability = text
        }
        if let passkey = keys["passkey"] {
            let value = try passkey.number()
            guard value >= 0, value <= 999_999, value == value.rounded() else {
                throw passkey.error("passkey is an integer from 0 to 999999")
            }
            pairing.passkey = UInt32(value)
        }
        if let responds = keys["responds"] { pairing.responds = try responds.bool() }
        if let timeout = keys["timeout"] { pairing.timeout = try timeout.number() }
        if let wrong = keys["entersWrongPasskey"] { pairing.entersWrongPasskey = try wrong.bool() }
        return pairing
    }

    func range(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Range {
        let keys = try cursor.mapping(allowed: ["leaveAfter", "returnAfter"])
        guard let leave = keys["leaveAfter"] else { throw cursor.error("a range needs 'leaveAfter' (seconds)") }
        return Scenario.Range(leaveAfter: try leave.number(), returnAfter: try keys["returnAfter"]?.number())
    }
}
