import DBus

/// The options of ReadValue/WriteValue (`parse_options` in
/// src/gatt-client.c): `offset` (q), `type` (s), `mtu` (q), `device` (o),
/// `link` (s), `prepare-authorize` (b). A known key of the wrong type is
/// InvalidArguments; unknown keys are ignored.
struct GATTOptions {
    var offset = 0
    var type: String?

    init(_ value: Value) throws(DBusError) {
        guard case .dictionary(_, _, let entries) = value.unwrapped else { throw BluetoothdError.invalidArguments() }
        for entry in entries {
            guard case .string(let key) = entry.key else { throw BluetoothdError.invalidArguments() }
            let option = entry.value.unwrapped
            switch key.lowercased() {
            case "offset":
                guard case .uint16(let number) = option else { throw BluetoothdError.invalidArguments() }
                offset = Int(number)
            case "type":
                guard case .string(let text) = option else { throw BluetoothdError.invalidArguments() }
                type = text
            case "mtu":
                guard case .uint16 = option else { throw BluetoothdError.invalidArguments() }
            case "device":
                guard case .objectPath = option else { throw BluetoothdError.invalidArguments() }
            case "link":
                guard case .string = option else { throw BluetoothdError.invalidArguments() }
            case "prepare-authorize":
                guard case .boolean = option else { throw BluetoothdError.invalidArguments() }
            default:
                break
            }
        }
    }
}
