import BlueZ
import GatewayCore

/// The JSON of the core's results, as the REST routes answer them and the
/// MQTT bridge replies them: one encoding for both doors.
public enum CommandJSON {
    /// A device after `connect` or `disconnect` (bytes in hex).
    public static func device(_ device: Device) -> JSON {
        ModelJSON.device(device, encoding: .hex)
    }

    /// A value read, in `encoding`.
    public static func value(_ bytes: [UInt8], encoding: ByteEncoding) -> JSON {
        ModelJSON.value(bytes, encoding: encoding)
    }

    /// A device's services (`GET …/services`), with their characteristics
    /// and descriptors.
    public static func services(_ services: [GATTService]) -> JSON {
        .array(services.map(ModelJSON.service))
    }

    /// One characteristic (`GET …/characteristics/{c}`) of `service`.
    public static func characteristic(_ characteristic: GATTCharacteristic, service: BluetoothUUID) -> JSON {
        ModelJSON.characteristic(characteristic, service: service)
    }

    /// A device kept on this gateway.
    public static func kept(_ kept: ConnectionKeeper.KeptDevice) -> JSON {
        var members: [(String, JSON)] = [
            ("adapter", .string(kept.adapter)), ("via", .string(kept.via)), ("address", .string(kept.address.description)),
            ("status", .string(kept.status.rawValue)), ("failed_attempts", .int(kept.failedAttempts)),
            ("max_attempts", kept.maxAttempts.map { .int($0) } ?? .null),
        ]
        if let reason = kept.lastReason { members.append(("last_reason", .string(reason))) }
        if let label = kept.label { members.append(("label", .string(label))) }
        return .object(members)
    }

    /// What a keep did: its status (201 newly kept, 200 options changed,
    /// 202 the fleet's wish published) and its JSON.
    public static func keep(_ outcome: KeepOutcome) -> (status: Int, json: JSON) {
        switch outcome {
        case .kept(let kept, let isNew): (isNew ? 201 : 200, kept.map(Self.kept) ?? .null)
        case .keptByFleet(let wish): (202, wish.json)
        }
    }
}
