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
    ///
    /// Built byte by byte on the UTF-8 view, never by `Character`: the
    /// separators (CR, LF, NUL) are ASCII and never part of a multi-byte
    /// UTF-8 sequence, and CR LF is one line end either way. Data known to
    /// be one line (compact JSON) takes `frame(id:event:data:)` instead.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.utf8.count + (id?.utf8.count ?? 0) + (event?.utf8.count ?? 0) + 32)
        if let id {
            bytes += "id: ".utf8
            Self.appendSingleLine(id, droppingNUL: true, to: &bytes)
            bytes.append(Self.lineFeed)
        }
        if let event {
            bytes += "event: ".utf8
            Self.appendSingleLine(event, droppingNUL: false, to: &bytes)
            bytes.append(Self.lineFeed)
        }
        if let retry, retry >= 0 { bytes += "retry: \(retry)\n".utf8 }
        Self.appendLines(of: data, prefix: "data: ", emptyPrefix: "data: ", to: &bytes)
        bytes.append(Self.lineFeed)
        return bytes
    }

    /// An event whose data is a single line that `writeData` appends to the
    /// frame's bytes itself, such as compact JSON (which escapes every line
    /// break): no `String` is built and nothing is scanned for line ends.
    /// `writeData` must not append CR or LF, which would end the line.
    public static func frame(id: UInt64?, event: String, data writeData: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        if let id {
            bytes += "id: ".utf8
            bytes += String(id).utf8
            bytes.append(lineFeed)
        }
        bytes += "event: ".utf8
        appendSingleLine(event, droppingNUL: false, to: &bytes)
        bytes += "\ndata: ".utf8
        let dataStart = bytes.count
        writeData(&bytes)
        assert(!bytes[dataStart...].contains { $0 == lineFeed || $0 == carriageReturn }, "data must be one line")
        bytes += [lineFeed, lineFeed]
        return bytes
    }

    /// A comment: one `:` line per line of `text`, then a blank line.
    /// Clients ignore comments; they keep idle connections alive.
    public static func comment(_ text: String = "") -> [UInt8] {
        var bytes: [UInt8] = []
        appendLines(of: text, prefix: ": ", emptyPrefix: ":", to: &bytes)
        bytes.append(lineFeed)
        return bytes
    }

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D

    /// Appends each line of `text` (split on CRLF, CR or LF, the three line
    /// ends the format accepts) as `prefix` + line + LF; an empty line gets
    /// `emptyPrefix` instead.
    private static func appendLines(of text: String, prefix: String, emptyPrefix: String, to bytes: inout [UInt8]) {
        withUTF8(of: text) { source in
            var start = 0
            var index = 0
            func line(_ end: Int) {
                if end == start {
                    bytes += emptyPrefix.utf8
                } else {
                    bytes += prefix.utf8
                    bytes += UnsafeBufferPointer(rebasing: source[start..<end])
                }
                bytes.append(lineFeed)
            }
            while index < source.count {
                let byte = source[index]
                if byte == lineFeed || byte == carriageReturn {
                    line(index)
                    index += byte == carriageReturn && index + 1 < source.count && source[index + 1] == lineFeed ? 2 : 1
                    start = index
                } else {
                    index += 1
                }
            }
            line(source.count)
        }
    }

    /// Appends `text` without CR and LF (and NUL when asked).
    private static func appendSingleLine(_ text: String, droppingNUL: Bool, to bytes: inout [UInt8]) {
        withUTF8(of: text) { source in
            for byte in source where byte != lineFeed && byte != carriageReturn && !(droppingNUL && byte == 0) {
                bytes.append(byte)
            }
        }
    }

    private static func withUTF8(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if text.utf8.withContiguousStorageIfAvailable(body) == nil {
            Array(text.utf8).withUnsafeBufferPointer(body)
        }
    }
}
