extension ScenarioParser {
    /// bluetoothd's names for characteristic properties (GattCharacteristic1.Flags).
    static let characteristicFlags: Set<String> = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
    ]

    func service(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Service {
        let keys = try cursor.mapping(allowed: ["uuid", "primary", "characteristics", "includes"])
        guard let uuid = keys["uuid"] else { throw cursor.error("a service needs a 'uuid'") }
        var service = Scenario.Service(uuid: try uuid.uuid())
        if let primary = keys["primary"] { service.primary = try primary.bool() }
        if let includes = keys["includes"] {
            service.includes = try includes.sequence().map { item throws(ScenarioError) in try item.uuid() }
        }
        if let characteristics = keys["characteristics"] {
            service.characteristics = try characteristics.sequence().map { item throws(ScenarioError) in
                try characteristic(item)
            }
        }
        return service
    }

    func characteristic(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Characteristic {
        let keys = try cursor.mapping(allowed: [
            "uuid", "flags", "value", "text", "behaviour", "behavior", "encrypted", "descriptors",
        ])
        guard let uuid = keys["uuid"] else { throw cursor.error("a characteristic needs a 'uuid'") }
        var characteristic = Scenario.Characteristic(uuid: try uuid.uuid())
        if let flags = keys["flags"] {
            characteristic.flags = try flags.sequence().map { item throws(ScenarioError) in
                let flag = try item.string()
                guard Self.characteristicFlags.contains(flag) else {
                    throw item.error(
                        "unknown flag '\(flag)' (expected \(Self.characteristicFlags.sorted().joined(separator: ", ")))")
                }
                return flag
            }
        }
        characteristic.value = try value(keys)
        if let behaviour = keys["behaviour"] ?? keys["behavior"] {
            characteristic.behaviour = try self.behaviour(behaviour)
        }
        if let encrypted = keys["encrypted"] { characteristic.encrypted = try encrypted.bool() }
        if let descriptors = keys["descriptors"] {
            characteristic.descriptors = try descriptors.sequence().map { item throws(ScenarioError) in
                let keys = try item.mapping(allowed: ["uuid", "flags", "value", "text"])
                guard let uuid = keys["uuid"] else { throw item.error("a descriptor needs a 'uuid'") }
                var descriptor = Scenario.Descriptor(uuid: try uuid.uuid(), value: try value(keys))
                if let flags = keys["flags"] {
                    descriptor.flags = try flags.sequence().map { item throws(ScenarioError) in try item.string() }
                }
                return descriptor
            }
        }
        return characteristic
    }

    /// `value: 0a0b` (hex) or `text: "Polar"` (UTF-8).
    private func value(_ keys: [String: YAMLCursor]) throws(ScenarioError) -> [UInt8] {
        if let text = keys["text"] { return Array(try text.string().utf8) }
        return try keys["value"]?.bytes() ?? []
    }

    func behaviour(_ cursor: YAMLCursor) throws(ScenarioError) -> Scenario.Behaviour {
        // A bare kind (`behaviour: echo`) or a mapping with `kind:`.
        if case .scalar = cursor.node.content {
            let kind = try cursor.string()
            return try behaviour(kind: kind, keys: [:], at: cursor)
        }
        let keys = try cursor.mapping(allowed: [
            "kind", "start", "step", "size", "rate", "bpm", "variation", "level", "drain", "every", "minimum",
            "celsius", "accept", "error", "values",
        ])
        guard let kind = keys["kind"] else { throw cursor.error("a behaviour needs a 'kind'") }
        return try behaviour(kind: try kind.string(), keys: keys, at: cursor)
    }

    private func behaviour(kind: String, keys: [String: YAMLCursor], at cursor: YAMLCursor)
        throws(ScenarioError) -> Scenario.Behaviour
    {
        func rate(_ fallback: Double) throws(ScenarioError) -> Double {
            try keys["rate"]?.number() ?? fallback
        }
        switch kind {
        case "constant", "static":
            return .constant
        case "counter":
            let size = try keys["size"]?.integer(in: 1...8) ?? 4
            return .counter(
                start: UInt64(try keys["start"]?.integer(in: 0...Int.max) ?? 0),
                step: UInt64(try keys["step"]?.integer(in: 0...Int.max) ?? 1), size: size, rate: try rate(0))
        case "heart-rate":
            return .heartRate(
                bpm: try keys["bpm"]?.integer(in: 20...250) ?? 72,
                variation: try keys["variation"]?.integer(in: 0...100) ?? 4, rate: try rate(1))
        case "battery":
            return .battery(
                level: try keys["level"]?.integer(in: 0...100) ?? 100, drain: try keys["drain"]?.integer(in: 0...100) ?? 1,
                every: try keys["every"]?.number(minimum: 0.001) ?? 60, minimum: try keys["minimum"]?.integer(in: 0...100) ?? 0)
        case "thermometer":
            return .thermometer(
                celsius: try keys["celsius"]?.number(minimum: -273) ?? 21.5,
                variation: try keys["variation"]?.number() ?? 0.3, rate: try rate(1))
        case "echo":
            return .echo
        case "control-point":
            let accept = try keys["accept"]?.sequence().map { item throws(ScenarioError) in try item.bytes() } ?? []
            return .controlPoint(accept: accept, error: UInt8(try keys["error"]?.integer(in: 1...0xff) ?? 0x80))
        case "sequence":
            guard let values = keys["values"] else { throw cursor.error("a sequence needs 'values'") }
            let list = try values.sequence().map { item throws(ScenarioError) in try item.bytes() }
            guard !list.isEmpty else { throw values.error("a sequence needs at least one value") }
            return .sequence(values: list, rate: try rate(1))
        case "failing":
            return .failing(error: UInt8(try keys["error"]?.integer(in: 1...0xff) ?? 0x0e))
        default:
            throw cursor.error(
                "unknown behaviour '\(kind)' (expected constant, counter, heart-rate, battery, thermometer, echo, "
                    + "control-point, sequence or failing)")
        }
    }
}
