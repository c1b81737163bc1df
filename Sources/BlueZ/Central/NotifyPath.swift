/// How a central asks BlueZ for a characteristic's notifications
/// (`Central.Options.notifyPath`).
public enum NotifyPath: String, Sendable, CaseIterable {
    /// `AcquireNotify` where BlueZ offers it (the characteristic notifies and
    /// has `NotifyAcquired`): bluetoothd writes each value as one packet on a
    /// socket the central reads, with no D-Bus message per value. Indications,
    /// and characteristics where `AcquireNotify` is refused (another client
    /// holds a session), use `StartNotify`.
    case acquire
    /// `StartNotify` always: each value is a `PropertiesChanged` signal.
    case startNotify = "start-notify"
}
