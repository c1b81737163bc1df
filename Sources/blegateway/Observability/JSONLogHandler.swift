import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

/// A log handler that writes one JSON object per line to standard error,
/// for containers whose log collectors parse lines:
///
/// ```json
/// {"timestamp":"2026-11-24T11:50:00.123Z","level":"info","label":"blegateway","message":"listening on 127.0.0.1:8080","metadata":{"request_id":"..."}}
/// ```
///
/// `metadata` (the logger's, the provider's, then the line's own, the later
/// winning) is left out when empty; a line never spans two lines of output,
/// since JSON escapes every line break inside a string.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var line = "{\"timestamp\":"
        Self.appendString(Date().formatted(Self.timestampStyle), to: &line)
        line += ",\"level\":"
        Self.appendString(event.level.rawValue, to: &line)
        line += ",\"label\":"
        Self.appendString(label, to: &line)
        line += ",\"message\":"
        Self.appendString(event.message.description, to: &line)
        if !merged.isEmpty {
            line += ",\"metadata\":"
            Self.append(.dictionary(merged), to: &line)
        }
        line += "}\n"
        Self.output.write(line)
    }

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let output = LineWriter()

    static func append(_ value: Logger.Metadata.Value, to line: inout String) {
        switch value {
        case .string(let text): appendString(text, to: &line)
        case .stringConvertible(let convertible): appendString(convertible.description, to: &line)
        case .array(let values):
            line += "["
            for (index, element) in values.enumerated() {
                if index > 0 { line += "," }
                append(element, to: &line)
            }
            line += "]"
        case .dictionary(let members):
            line += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                appendString(key, to: &line)
                line += ":"
                if let member = members[key] { append(member, to: &line) }
            }
            line += "}"
        }
    }

    /// A JSON string literal (RFC 8259: quote, backslash and control
    /// characters escaped).
    static func appendString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }
}

/// Writes whole lines to standard error, one writer at a time, so that the
/// lines of concurrent loggers never interleave.
final class LineWriter: Sendable {
    private let lock = Mutex(())

    func write(_ line: String) {
        var bytes = Array(line.utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { buffer -> Int in
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glibc.write(2, base + offset, buffer.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
