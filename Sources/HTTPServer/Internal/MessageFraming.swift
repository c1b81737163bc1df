/// The framing checks of RFC 9112 §6.3 that libmicrohttpd 0.9.75 leaves to
/// the application.
///
/// libmicrohttpd reads only the first `Content-Length` field and ignores it
/// when `Transfer-Encoding` is present; it treats any transfer coding other
/// than exactly `chunked` as "read until the connection closes". A proxy in
/// front of the server may pick another field or coding, and then the bytes
/// one of them takes for a body the other takes for the next request
/// (request smuggling). So a request whose length is ambiguous is refused
/// with 400, and its connection closed, before any byte after its head is
/// read as a request.
enum MessageFraming {
    /// Why the head's framing is refused, or nil when it is unambiguous.
    static func violation(in headers: Headers, version: String) -> String? {
        let lengths = headers.values(for: "Content-Length")
        let codings = headers.values(for: "Transfer-Encoding")
        if lengths.count > 1 {
            return "the request has \(lengths.count) Content-Length fields"
        }
        guard !codings.isEmpty else { return nil }
        if !lengths.isEmpty {
            return "the request has both Content-Length and Transfer-Encoding"
        }
        if version == "HTTP/1.0" {
            return "an HTTP/1.0 request cannot use Transfer-Encoding"
        }
        let list = codings.joined(separator: ",").split(separator: ",").map(trimmed).filter { !$0.isEmpty }
        if list != ["chunked"] {
            return "the only transfer coding accepted is chunked, and it must come last and alone"
        }
        return nil
    }

    /// A list element without its surrounding spaces and tabs, lowercased.
    private static func trimmed(_ element: Substring) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(element.drop(while: isBlank).reversed().drop(while: isBlank).reversed()).lowercased()
    }
}
