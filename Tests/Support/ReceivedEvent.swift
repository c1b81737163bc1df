import Foundation

/// One block of a `text/event-stream` as a client received it: what the
/// tests' SSE clients (over a socket, or a `curl -N` child's output) read
/// from the HTTP server's and the gateway's streams.
public struct ReceivedEvent: Equatable, Sendable {
    public var id: String?
    /// The `event:` field as sent; nil when the block has none.
    public var event: String?
    /// The `data:` lines, in order.
    public var dataLines: [String] = []
    /// The comment lines (`: …`), without the colon and leading spaces.
    public var comments: [String] = []

    public init(id: String? = nil, event: String? = nil, dataLines: [String] = [], comments: [String] = []) {
        self.id = id
        self.event = event
        self.dataLines = dataLines
        self.comments = comments
    }

    /// The type an EventSource dispatches it as: `event`, or `message`.
    public var type: String { event ?? "message" }

    /// The data lines joined as an EventSource joins them.
    public var data: String { dataLines.joined(separator: "\n") }

    /// No id, type or data: a heartbeat or other comment, not an event.
    public var isComment: Bool { id == nil && event == nil && dataLines.isEmpty }

    /// The data as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
    }

    /// Reads one block (its lines, without the blank line that ends it),
    /// by the rules of the HTML standard's event-stream parser: `field:
    /// value` with one optional space after the colon, a line starting
    /// with a colon a comment, unknown fields ignored.
    public init(block: some StringProtocol) {
        self.init()
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                continue
            }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            var value = parts.count > 1 ? Substring(parts[1]) : ""
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch parts[0] {
            case "id": id = String(value)
            case "event": event = String(value)
            case "data": dataLines.append(String(value))
            default: break
            }
        }
    }

    /// The complete blocks at the start of `text` (each ended by a blank
    /// line), and what follows the last of them, not yet complete.
    public static func blocks(in text: some StringProtocol) -> (blocks: [ReceivedEvent], rest: String) {
        var parts = String(text).components(separatedBy: "\n\n")
        let rest = parts.removeLast()
        return (parts.map { ReceivedEvent(block: $0) }, rest)
    }
}
