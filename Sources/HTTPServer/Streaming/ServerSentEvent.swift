/// One Server-Sent Event, encoded for a `text/event-stream` body.
///
/// Encode an event once and write the same bytes to every client:
///
/// ```swift
/// let bytes = ServerSentEvent(id: "42", event: "notification", data: #"{"value":"0e77"}"#).encoded
/// for writer in subscribers { writer.write(bytes) }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The `id:` field (sets the client's Last-Event-ID); line breaks and
    /// NUL are removed since the field cannot carry them.
    public var id: String?
    /// The `event:` field (the event type); line breaks are removed.
    public var event: String?
    /// The payload; each line becomes one `data:` line.
    public var data: String
    /// The `retry:` field: the client's reconnection delay in milliseconds.
    public var retry: Int?

    /// An event; only `data` is required.
    public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event as stream bytes, ending with the blank line that
    /// dispatches it.
    public var encoded: [UInt8] {
        var text = ""
        if let id { text += "id: \(Self.singleLine(id, droppingNUL: true))\n" }
        if let event { text += "event: \(Self.singleLine(event, droppingNUL: false))\n" }
        if let retry, retry >= 0 { text += "retry: \(retry)\n" }
        for line in Self.lines(of: data) { text += "data: \(line)\n" }
        text += "\n"
        return Array(text.utf8)
    }

    /// A comment: one `:` line per line of `text`, then a blank line.
    /// Clients ignore comments; they keep idle connections alive.
    public static func comment(_ text: String = "") -> [UInt8] {
        var encoded = ""
        for line in lines(of: text) { encoded += line.isEmpty ? ":\n" : ": \(line)\n" }
        encoded += "\n"
        return Array(encoded.utf8)
    }

    /// Splits on CRLF, CR or LF, the three line ends the format accepts.
    static func lines(of text: String) -> [Substring] {
        // `Character` treats "\r\n" as one grapheme, so this splits CRLF once.
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
    }

    private static func singleLine(_ text: String, droppingNUL: Bool) -> String {
        String(text.unicodeScalars.filter { $0 != "\n" && $0 != "\r" && !(droppingNUL && $0 == "\0") })
    }
}
