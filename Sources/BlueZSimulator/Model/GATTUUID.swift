/// A GATT UUID in the form bluetoothd puts on D-Bus: 128-bit, lower case,
/// `0000180d-0000-1000-8000-00805f9b34fb`.
///
/// Scenarios may write the 16-bit (`180d`, `0x180D`) or 32-bit short forms;
/// they are expanded with the Bluetooth base UUID.
public struct GATTUUID: Sendable, Hashable, CustomStringConvertible {
    /// The 128-bit form, lower case with dashes.
    public let string: String

    public init?(_ text: String) {
        var hex = text.lowercased()
        if hex.hasPrefix("0x") { hex.removeFirst(2) }
        let digits = hex.filter { $0 != "-" }
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        switch digits.count {
        case 4: hex = "0000" + digits + Self.baseSuffix
        case 8: hex = digits + Self.baseSuffix
        case 32:
            let d = Array(digits)
            hex = String(d[0..<8]) + "-" + String(d[8..<12]) + "-" + String(d[12..<16]) + "-"
                + String(d[16..<20]) + "-" + String(d[20..<32])
        default: return nil
        }
        string = hex
    }

    /// A 16-bit SIG UUID.
    public init(short: UInt16) {
        let digits = String(short, radix: 16)
        string = String(repeating: "0", count: 8 - digits.count) + digits + Self.baseSuffix
    }

    /// The 16-bit value, when this is a SIG UUID on the base UUID.
    public var short: UInt16? {
        guard string.hasSuffix(Self.baseSuffix), string.hasPrefix("0000") else { return nil }
        return UInt16(string.dropFirst(4).prefix(4), radix: 16)
    }

    public var description: String { string }

    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    static let clientCharacteristicConfiguration = GATTUUID(short: 0x2902)
}
