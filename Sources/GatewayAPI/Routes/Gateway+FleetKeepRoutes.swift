import BlueZ
import GatewayCore
import HTTPServer

// Keeping by the fleet (docs/fleet.md, "Kept by the fleet"): `"fleet": true`
// in a keep body publishes the fleet's wish on the broker instead of
// keeping the device here; the fleet's gateways choose which one holds it.
extension Gateway {
    /// The fields of a keep body, the fleet's included.
    static let keepFields: Set<String> = ["max_attempts", "label", "fleet", "pin", "prefer", "subscriptions"]

    /// The fleet's wish in a keep body with `"fleet": true`; nil for a keep
    /// on this gateway (where `pin`, `prefer` and `subscriptions` mean
    /// nothing: a 400).
    static func fleetKeep(_ address: BluetoothAddress, _ body: JSONField) throws(Problem) -> FleetKeep? {
        let fleet = try body["fleet"].bool()
        if fleet == false {
            throw Problem.invalidParameter("fleet", "is true, or left out for a keep on this gateway")
        }
        guard fleet == true else {
            for name in ["pin", "prefer", "subscriptions"] where body[name].json != nil {
                throw Problem.invalidParameter(name, "is for a device kept by the fleet: add \"fleet\": true")
            }
            return nil
        }
        // null is none, as `/v1/fleet/devices` shows it (a client may send
        // the wish back as it read it).
        let pin = body["pin"].json == .null ? nil : try body["pin"].string(maxLength: 256)
        let prefer = body["prefer"].json == .null ? nil : try body["prefer"].string(maxLength: 128)
        if let pin, pin.isEmpty || pin.hasPrefix("/") || pin.hasSuffix("/") || pin.split(separator: "/").count > 2 {
            throw Problem.invalidParameter("pin", "names a gateway or gateway/adapter, not '\(pin)'")
        }
        if let prefer, prefer.isEmpty || prefer.contains("/") {
            throw Problem.invalidParameter("prefer", "names a gateway, not '\(prefer)'")
        }
        var subscriptions: [FleetKeep.Subscription] = []
        for element in try body["subscriptions"].array() {
            try element.object(allowed: ["characteristic", "service"])
            let text = try element["characteristic"].string(maxLength: 64) ?? ""
            let serviceText = try element["service"].string(maxLength: 64)
            let service = try serviceText.map { (text) throws(Problem) in
                try Request.uuid(text, parameter: "\(element.path).service")
            }
            switch try Request.attribute(text, parameter: "\(element.path).characteristic", service: service) {
            case .handle(let handle):
                subscriptions.append(FleetKeep.Subscription(characteristic: "handle:\(handle)"))
            case .uuid(let uuid, let service):
                subscriptions.append(FleetKeep.Subscription(characteristic: uuid.description, service: service?.description))
            }
        }
        guard subscriptions.count <= 32 else {
            throw Problem.invalidParameter("subscriptions", "holds at most 32 characteristics")
        }
        return FleetKeep(
            address: address.description, pin: pin, prefer: prefer, subscriptions: subscriptions,
            maxAttempts: try body["max_attempts"].int(in: 1...1_000_000), label: try body["label"].string(maxLength: 128))
    }

    /// `?fleet=true` on a `DELETE …/keep`: the fleet's keep.
    static func fleetQuery(_ request: Request) throws(Problem) -> Bool {
        switch request.query["fleet"] {
        case nil, "false": return false
        case "true": return true
        case let other?: throw Problem.invalidParameter("fleet", "must be true or false, not '\(other)'")
        }
    }

    /// Publishes the wish: the fleet's gateways take it from there.
    func keepByFleet(_ wish: FleetKeep) async throws(GatewayCommandError) {
        try await core.keepByFleet(wish)
    }

    /// Clears the wish; a 404 when the fleet did not keep it.
    func unkeepByFleet(_ address: BluetoothAddress) async throws(GatewayCommandError) {
        try await core.unkeepByFleet(address)
    }
}
