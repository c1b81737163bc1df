/// Where the gateway listens: `host:port`, `[v6]:port`, or a bare port
/// (meaning 127.0.0.1).
struct ListenAddress: Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(_ text: String) {
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
        self.host = hostPart
        self.port = port
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
