import Synchronization

/// What consumers derive from one delivered value (an encoded event frame,
/// its event id), kept with the value so that it is derived once however
/// many subscribers receive it: every subscriber of a characteristic gets
/// the same instance with each notification.
public final class DerivedValues: Sendable {
    private let entries = Mutex<[String: any Sendable]>([:])

    public init() {}

    /// The entry for `key`, made by `make` for the first caller; later
    /// callers wait for it and get the same. `make` runs under this
    /// instance's lock, so it must not ask this instance for another entry.
    public func value<Value: Sendable>(for key: String, _ make: () -> Value) -> Value {
        entries.withLock { entries in
            if let existing = entries[key] as? Value { return existing }
            let made = make()
            entries[key] = made
            return made
        }
    }
}
