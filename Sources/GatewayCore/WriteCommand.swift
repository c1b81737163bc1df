import BlueZ

/// Write bytes to a characteristic, with a response (`request`), without
/// (`command`) or as a reliable write, at `offset`. With `pairing: .auto`,
/// a write refused for want of pairing pairs and writes once more.
public struct WriteCommand: Sendable, Hashable {
    public let characteristic: CharacteristicTarget
    public let value: [UInt8]
    public let type: WriteType
    public let offset: UInt16
    public let timeout: Duration?
    public let pairing: PairingPolicy

    public init(
        characteristic: CharacteristicTarget, value: [UInt8], type: WriteType = .request, offset: UInt16 = 0,
        timeout: Duration? = nil, pairing: PairingPolicy = .never
    ) {
        self.characteristic = characteristic
        self.value = value
        self.type = type
        self.offset = offset
        self.timeout = timeout
        self.pairing = pairing
    }

    /// A write type as a client names it (`request`, `command`,
    /// `reliable`, in any case); a mistake names `type`.
    public static func type(_ text: String) throws(GatewayCommandError) -> WriteType {
        guard let type = WriteType(rawValue: text.lowercased()) else {
            throw .invalidParameter(name: "type", reason: "must be request, command or reliable, not '\(text)'")
        }
        return type
    }
}
