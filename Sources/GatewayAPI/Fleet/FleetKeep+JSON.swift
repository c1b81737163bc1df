import GatewayCore

// A fleet's keep as JSON: published on the broker, shown in
// `/v1/fleet/devices` and answered to a keep by the fleet.
extension FleetKeep {
    /// As published on the broker and shown in `/v1/fleet/devices`.
    public var json: JSON {
        var members: [(String, JSON)] = [
            ("address", .string(address)), ("pin", pin.map(JSON.string) ?? .null),
            ("prefer", prefer.map(JSON.string) ?? .null),
            (
                "subscriptions",
                .array(
                    subscriptions.map { subscription in
                        var fields: [(String, JSON)] = [("characteristic", .string(subscription.characteristic))]
                        if let service = subscription.service { fields.append(("service", .string(service))) }
                        return .object(fields)
                    })
            ),
        ]
        if let maxAttempts { members.append(("max_attempts", .int(maxAttempts))) }
        if let label { members.append(("label", .string(label))) }
        return .object(members)
    }

    /// Reads a published wish leniently (another gateway wrote it): nil
    /// when it names no address.
    public init?(published object: JSONField) {
        guard let address = (try? object["address"].string()) ?? nil else { return nil }
        self.init(
            address: address, pin: (try? object["pin"].string()) ?? nil, prefer: (try? object["prefer"].string()) ?? nil,
            subscriptions: ((try? object["subscriptions"].array()) ?? []).compactMap { element in
                guard let characteristic = (try? element["characteristic"].string()) ?? nil else { return nil }
                return Subscription(characteristic: characteristic, service: (try? element["service"].string()) ?? nil)
            },
            maxAttempts: (try? object["max_attempts"].int(in: 1...1_000_000)) ?? nil,
            label: (try? object["label"].string()) ?? nil)
    }
}
