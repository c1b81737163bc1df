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
///
/// This runs for every notification and every stream, so a lookup is a
/// scan of a few entries comparing the key's type by identity, with no
/// hashing, boxing or dynamic cast (`value(for:_:)` is inlinable, so each
/// caller gets it specialized for its key type).
public final class DerivedValues: Sendable {
    @usableFromInline let entries = Mutex<[DerivedEntry]>([])

    public init() {}

    /// The entry for `key`, made by `make` for the first caller; later
    /// callers wait for it and get the same. `make` runs under this
    /// instance's lock, so it must not ask this instance for another entry.
    @inlinable
    public func value<Key: DerivedKey>(for key: Key, _ make: () -> Key.Value) -> Key.Value {
        entries.withLock { entries in
            let type = ObjectIdentifier(Key.self)
            for entry in entries where entry.keyType == type {
                // Only `TypedDerivedEntry<Key>` is stored with Key's type.
                let typed = unsafeDowncast(entry, to: TypedDerivedEntry<Key>.self)
                if typed.key == key { return typed.value }
            }
            let made = make()
            entries.append(TypedDerivedEntry(key: key, value: made))
            return made
        }
    }
}

/// One entry of `DerivedValues`, found by its key's type.
///
/// `@unchecked Sendable`: a non-final class cannot be checked, and every
/// stored property here and in its one subclass is an immutable `let` of a
/// Sendable type.
@usableFromInline class DerivedEntry: @unchecked Sendable {
    @usableFromInline let keyType: ObjectIdentifier

    @usableFromInline
    init(keyType: ObjectIdentifier) { self.keyType = keyType }
}

/// `@unchecked Sendable` as its superclass: `key` and `value` are
/// immutable and Sendable (`DerivedKey` and its `Value` require it).
@usableFromInline final class TypedDerivedEntry<Key: DerivedKey>: DerivedEntry, @unchecked Sendable {
    @usableFromInline let key: Key
    @usableFromInline let value: Key.Value

    @usableFromInline
    init(key: Key, value: Key.Value) {
        self.key = key
        self.value = value
        super.init(keyType: ObjectIdentifier(Key.self))
    }
}
