/// A change the state store could not save; nothing was changed.
public struct StateStoreFailure: Error, Sendable {
    /// Why, naming the file and the fix.
    public let message: String
    /// The disk is full (the change may succeed once space is freed).
    public let diskFull: Bool

    public init(message: String, diskFull: Bool) {
        self.message = message
        self.diskFull = diskFull
    }
}
