import Foundation

/// One event of a `text/event-stream`.
public struct ServerSentEvent: Sendable, Hashable {
    public var id: String?
    /// The `event:` field (`message` when absent).
    public var type: String
    /// The `data:` lines, joined with newlines.
    public var data: String

    public init(id: String? = nil, type: String = "message", data: String) {
        self.id = id
        self.type = type
        self.data = data
    }

    /// The data, decoded as JSON of `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws(GatewayError) -> T {
        do {
            return try JSONDecoder.gateway.decode(type, from: Data(data.utf8))
        } catch {
            throw GatewayError(detail: "the gateway's '\(self.type)' event is not what its API describes: \(error)")
        }
    }
}

/// Turns the bytes of an event stream into events, as the HTML standard's
/// "interpreting an event stream" says: lines end with CR, LF or CRLF; a
/// blank line dispatches the event; comments (`:`) and unknown fields are
/// ignored. Small enough to own; the packages that parse SSE bring their
/// own HTTP stacks.
struct ServerSentEventParser {
    private var line: [UInt8] = []
    private var lastWasCR = false
    private var id: String?
    private var type: String?
    private var data: [String] = []

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n"), lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let event = endLine() { events.append(event) }
            } else {
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer {
                type = nil
                data = []
            }
            guard !data.isEmpty else { return nil }
            return ServerSentEvent(id: id, type: type ?? "message", data: data.joined(separator: "\n"))
        }
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": type = String(value)
        case "data": data.append(String(value))
        case "id" where !value.contains("\0"): id = String(value)
        default: break
        }
        return nil
    }
}
