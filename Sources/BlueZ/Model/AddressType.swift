/// Whether a device's address is its public (IEEE-assigned) address or a
/// random one, as BlueZ's `Device1.AddressType` property says.
///
/// The raw values are BlueZ's strings. BR/EDR devices always report
/// `public`.
public enum AddressType: String, Sendable, Hashable, CaseIterable {
    case `public` = "public"
    case random = "random"
}
