import Foundation

/// A response as `curl -i` printed it.
struct HTTPAnswer: CustomStringConvertible {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    /// The path the request asked for (without the query), when known.
    var path: String?

    init(raw: [UInt8], path: String? = nil) throws {
        self.path = path
        // Skip interim responses (100 Continue) to the final head.
        var text = raw
        while true {
            guard let end = Self.headEnd(text) else { throw GatewayTestError("no HTTP head in \(String(decoding: raw, as: UTF8.self))") }
            let head = String(decoding: text[..<end], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.first?.split(separator: " ") ?? []
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                throw GatewayTestError("bad status line \(lines.first ?? "")")
            }
            if status == 100 {
                text = Array(text[(end + 4)...])
                continue
            }
            self.status = status
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            self.headers = headers
            self.body = Array(text[(end + 4)...])
            return
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as JSON (objects as [String: Any], arrays as [Any]).
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }

    var contentType: String? { headers["content-type"] }

    var description: String { "HTTP \(status) \(contentType ?? "") \(text.prefix(400))" }
}
