import Synchronization

/// What a consumer derives from a delivered value and keeps with it (an
/// encoded event frame, its event id): a key's type names the entry and
/// says what it holds, so two consumers cannot mistake each other's
/// entries, and a key's value tells entries of one kind apart (a frame per
/// encoding).
public protocol DerivedKey: Hashable, Sendable {
    associatedtype Value: Sendable
}

/// What consumers derive from one delivered value, kept with the value so
/// that it is derived once however many subscribers receive it: every
/// subscriber of a characteristic gets the same instance with each
/// notification.
public final class DerivedValues: Sendable {
    private let entries = Mutex<[AnyHashable: any Sendable]>([:])

    public init() {}

    /// The entry for `key`, made by `make` for the first caller; later
    /// callers wait for it and get the same. `make` runs under this
    /// instance's lock, so it must not ask this instance for another entry.
    public func value<Key: DerivedKey>(for key: Key, _ make: () -> Key.Value) -> Key.Value {
        entries.withLock { entries in
            // The key's type is part of its AnyHashable identity: an entry
            // found under it was stored by this function with Key.Value.
            if let existing = entries[AnyHashable(key)] as? Key.Value { return existing }
            let made = make()
            entries[AnyHashable(key)] = made
            return made
        }
    }
}
