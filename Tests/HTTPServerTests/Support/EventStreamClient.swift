import TestSupport

/// Reads a `text/event-stream` response over a RawClient, one message
/// (event or comment block) at a time.
// @unchecked Sendable: like RawClient, used by one thread at a time.
final class EventStreamClient: @unchecked Sendable {
    let client: RawClient
    private(set) var head: RawClient.Head?
    private var text = ""
    private(set) var ended = false

    init(client: RawClient) { self.client = client }

    /// Connects and sends `GET target`; reads the response head. A small
    /// `receiveBuffer` makes the server meet a full socket soon.
    static func open(
        port: Int, target: String, host: String = "127.0.0.1", receiveBuffer: Int? = nil, timeout: Double = 10
    ) throws -> EventStreamClient {
        let client = try RawClient(host: host, port: port, receiveBuffer: receiveBuffer, timeout: timeout)
        try client.request("GET", target, headers: ["Accept: text/event-stream"])
        let stream = EventStreamClient(client: client)
        stream.head = try client.readHead()
        return stream
    }

    /// The next message; nil when the stream ended (zero-size chunk).
    func next() throws -> ReceivedEvent? {
        while true {
            if let range = text.range(of: "\n\n") {
                let block = text[..<range.lowerBound]
                defer { text.removeSubrange(..<range.upperBound) }
                return ReceivedEvent(block: block)
            }
            guard !ended, let chunk = try client.readChunk() else {
                ended = true
                return nil
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The next message that is not a comment.
    func nextEvent() throws -> ReceivedEvent? {
        while let message = try next() {
            if !message.isComment { return message }
        }
        return nil
    }
}
