/// A Bluetooth SIG company identifier: the key of a device's manufacturer
/// data (BlueZ's `Device1.ManufacturerData`, `a{qv}`), `0x004C` for Apple.
///
/// Encoded as its number, like BlueZ's `q` key.
public struct CompanyIdentifier: RawRepresentable, Hashable, Comparable, Sendable {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// The company's name in the SIG assigned numbers, or nil if unassigned
    /// (or assigned after the tables were generated).
    public var name: String? { Self.name(for: rawValue) }

    /// The name of the company with identifier `identifier`, or nil.
    public static func name(for identifier: UInt16) -> String? {
        AssignedNumbers.companyNames[identifier]
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension CompanyIdentifier: CustomStringConvertible {
    /// `0x004C`, the way the SIG lists identifiers.
    public var description: String { "0x" + Hex.string(UInt128(rawValue), width: 4, uppercase: true) }
}

extension CompanyIdentifier {
    /// Parses a company identifier as people type it: decimal (`76`) or
    /// 0x-hex in any case (`0x004c`); nil for anything else or above 65535.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        let value = lowered.hasPrefix("0x") ? UInt16(lowered.dropFirst(2), radix: 16) : UInt16(lowered)
        guard let value else { return nil }
        self.init(rawValue: value)
    }
}
