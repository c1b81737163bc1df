/// Reads a `text/event-stream` response over a RawClient, one message
/// (event or comment block) at a time.
// @unchecked Sendable: like RawClient, used by one thread at a time.
final class EventStreamClient: @unchecked Sendable {
    struct Message: Equatable {
        var id: String?
        var event: String?
        var data: [String] = []
        var comments: [String] = []

        var isComment: Bool { id == nil && event == nil && data.isEmpty && !comments.isEmpty }
    }

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
    func next() throws -> Message? {
        while true {
            if let range = text.range(of: "\n\n") {
                let block = String(text[..<range.lowerBound])
                text.removeSubrange(..<range.upperBound)
                return Self.parse(block)
            }
            guard !ended, let chunk = try client.readChunk() else {
                ended = true
                return nil
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The next message that is not a comment.
    func nextEvent() throws -> Message? {
        while let message = try next() {
            if !message.isComment { return message }
        }
        return nil
    }

    static func parse(_ block: String) -> Message {
        var message = Message()
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                message.comments.append(String(line.dropFirst()).trimmingPrefix(" ").description)
                continue
            }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0])
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch field {
            case "id": message.id = value
            case "event": message.event = value
            case "data": message.data.append(value)
            default: break
            }
        }
        return message
    }
}
