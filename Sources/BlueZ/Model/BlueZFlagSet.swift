/// An option set that BlueZ spells as an array of strings in a `Flags`
/// property (`GattCharacteristic1.Flags`, `GattDescriptor1.Flags`).
public protocol BlueZFlagSet: OptionSet, Sendable where Element == Self {
    /// Every single option with its BlueZ string, in the order the BlueZ
    /// documentation lists them: the order `bluezFlags` writes.
    static var bluezNames: [(option: Self, name: String)] { get }
}

extension BlueZFlagSet {
    /// The options named by BlueZ flag strings, and the strings this version
    /// does not know (in input order), so that a newer bluetoothd's flags
    /// are reported rather than silently lost.
    public static func parse(bluezFlags: some Sequence<String>) -> (flags: Self, unknown: [String]) {
        var flags: Self = []
        var unknown: [String] = []
        for string in bluezFlags {
            if let known = bluezNames.first(where: { $0.name == string }) {
                flags.insert(known.option)
            } else {
                unknown.append(string)
            }
        }
        return (flags, unknown)
    }

    /// The BlueZ strings of the options in the set, in documentation order.
    public var bluezFlags: [String] {
        Self.bluezNames.filter { contains($0.option) }.map(\.name)
    }
}
