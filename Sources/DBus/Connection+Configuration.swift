extension Connection {
    /// How a connection is set up (`Connection.connect(to:configuration:)`).
    /// The connection keeps it, so that a replacement (`BusSupervisor`) is
    /// set up alike.
    public struct Configuration: Sendable {
        /// How many calls may wait for replies at once; further calls wait
        /// for a free slot. The system bus refuses more than 128 pending
        /// replies per connection, so the default stays below.
        public var maxPendingCalls: Int
        /// Run by the connection's loop thread at the end of each of its
        /// turns: after it has handled what its poll returned and dispatched
        /// the messages it read, before it waits again, and once more after
        /// the connection ends (for what the end told its handlers). For
        /// work that handlers queue as they go and that is cheaper done once
        /// per turn, such as waking another thread once for many messages.
        /// It must be quick and must not block. The connection owns it and
        /// lets it go when its loop ends.
        public var endOfTurn: (@Sendable () -> Void)?

        public init(maxPendingCalls: Int = 100, endOfTurn: (@Sendable () -> Void)? = nil) {
            self.maxPendingCalls = maxPendingCalls
            self.endOfTurn = endOfTurn
        }
    }
}
