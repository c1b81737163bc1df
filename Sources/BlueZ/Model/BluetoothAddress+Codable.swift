/// Encoded as its canonical string (`"AA:BB:CC:DD:EE:FF"`), the form the
/// HTTP API and BlueZ both show; decoding accepts every form `init(parsing:)`
/// accepts.
extension BluetoothAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try BluetoothAddress(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
