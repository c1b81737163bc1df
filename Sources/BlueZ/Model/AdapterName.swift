/// The rule for an adapter's name, as BlueZ names its adapter objects
/// (`/org/bluez/hci0`): `hci` and the kernel's controller index.
///
/// The kernel numbers controllers from 0 to 9999 (`HCI_MAX_ID` in
/// net/bluetooth/hci_core.c), so the index has one to four ASCII digits.
/// Everything that takes an adapter name from people (the `--adapter`
/// option, `?adapter=`, a path or body) checks it here.
public enum AdapterName {
    /// The most digits an index has.
    static let maximumDigits = 4

    /// Whether `name` is `hci` followed by one to four ASCII digits.
    public static func isValid(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count > 3, utf8.starts(with: Array("hci".utf8)) else { return false }
        let digits = utf8.dropFirst(3)
        return digits.count <= maximumDigits && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Returns `name` if it is an adapter name, or throws
    /// `ParseError.Code.invalidAdapterName`.
    @discardableResult
    public static func validate(_ name: String) throws(ParseError) -> String {
        guard isValid(name) else {
            throw ParseError(.invalidAdapterName, "'\(name)' is not an adapter name (hci0, hci1, ...)")
        }
        return name
    }
}
