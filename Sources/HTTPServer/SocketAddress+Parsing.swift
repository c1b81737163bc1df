extension SocketAddress {
    /// Reads an address as people write where a server listens (`--listen`):
    /// `host:port`, `[v6]:port`, or a bare port (meaning 127.0.0.1). The
    /// host may be a name; the server resolves it when it starts. Nil when
    /// the text is none of the three forms or the port is outside 0...65535.
    public init?(parsing text: String) {
        var hostPart = "127.0.0.1"
        var portPart = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostPart = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            guard !text[..<colon].contains(":") else { return nil }  // IPv6 needs brackets
            hostPart = String(text[..<colon])
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (0...65535).contains(port) else { return nil }
        self.init(host: hostPart, port: port)
    }
}
