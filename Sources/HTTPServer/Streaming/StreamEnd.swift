/// Why a stream ended; passed once to the writer's termination handler.
public enum StreamEnd: Sendable, Hashable, CustomStringConvertible {
    /// The server side called `finish()` and the stream was sent to its end
    /// (or the request was HEAD, which has no body to stream).
    case finished
    /// The client closed the connection, or the connection failed or timed out.
    case clientDisconnected
    /// The client did not read fast enough: the writer's buffer went over
    /// its limit and the stream was dropped.
    case tooSlow
    /// The server stopped.
    case serverStopped

    public var description: String {
        switch self {
        case .finished: "finished"
        case .clientDisconnected: "client disconnected"
        case .tooSlow: "client too slow"
        case .serverStopped: "server stopped"
        }
    }
}
