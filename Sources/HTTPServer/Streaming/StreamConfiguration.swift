/// How a `StreamWriter` keeps its connection alive and bounds its memory.
public struct StreamConfiguration: Sendable {
    /// How often an idle stream sends `heartbeat`; nil for never. It keeps
    /// proxies and NATs from timing the connection out, and reveals a
    /// client that vanished without closing (a peer whose host went away);
    /// a client that closed its connection is noticed at once regardless.
    public var heartbeatInterval: Duration?
    /// The bytes sent as a heartbeat (an SSE comment by default).
    public var heartbeat: [UInt8]
    /// The most bytes the writer holds for a client that has not read them
    /// yet. A write that would go over drops the client instead.
    public var maxBufferedBytes: Int
    /// Sent in place of the buffered data when a slow client is dropped.
    public var dropNotice: [UInt8]
    /// How long a dropped client gets to take `dropNotice` and the end of
    /// the stream before its socket is shut down.
    public var dropGracePeriod: Duration

    public init(
        heartbeatInterval: Duration? = .seconds(15),
        heartbeat: [UInt8] = ServerSentEvent.comment(),
        maxBufferedBytes: Int = 256 * 1024,
        dropNotice: [UInt8] = ServerSentEvent.comment("dropped: client too slow"),
        dropGracePeriod: Duration = .seconds(1)
    ) {
        self.heartbeatInterval = heartbeatInterval
        self.heartbeat = heartbeat
        self.maxBufferedBytes = maxBufferedBytes
        self.dropNotice = dropNotice
        self.dropGracePeriod = dropGracePeriod
    }
}
