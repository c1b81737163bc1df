/// A broker's address as written on a command line: `mqtt://host[:port]` or
/// `mqtts://host[:port]` (TLS), optionally with `user[:password]@` before the
/// host. IPv6 hosts go in brackets (`mqtt://[::1]:1883`). The port defaults
/// to 1883 (mqtt) and 8883 (mqtts).
public struct BrokerURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var usesTLS: Bool
    /// The user name and password written in the URL, if any (percent-escapes
    /// decoded).
    public var username: String?
    public var password: String?

    public init(host: String, port: Int? = nil, usesTLS: Bool = false, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port ?? (usesTLS ? 8883 : 1883)
        self.usesTLS = usesTLS
        self.username = username
        self.password = password
    }

    /// Parses `mqtt://…` or `mqtts://…`; throws `MQTTError` with code
    /// `.invalidArgument` for anything else.
    public init(parsing text: String) throws {
        func invalid(_ why: String) -> MQTTError { MQTTError(.invalidArgument, "\(why): \(text)") }
        let tls: Bool
        var rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            throw invalid("a broker URL starts with mqtt:// or mqtts://")
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else { throw invalid("a broker URL has no path") }
            rest = rest[..<slash]
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                username = Self.percentDecoded(userInfo[..<colon])
                password = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
            } else {
                username = Self.percentDecoded(userInfo)
            }
            guard username != nil, password != nil || !userInfo.contains(":") else {
                throw invalid("bad percent-escape in the user name or password")
            }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("unclosed [ in the host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the host") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw invalid("no host") }
        var port: Int?
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw invalid("bad port") }
            port = number
        }
        self.init(host: String(host), port: port, usesTLS: tls, username: username, password: password)
    }

    /// The URL without the password.
    public var description: String {
        let user = username.map { "\($0)@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(user)\(shownHost):\(port)"
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
