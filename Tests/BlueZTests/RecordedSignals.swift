import DBus
import Foundation

@testable import BlueZ

/// A recording made by scripts/record-bluez-signals.py: bluetoothd's
/// GetManagedObjects reply, then every signal it sent, in order, with the
/// replies to the recorder's calls in between.
struct Recording {
    enum Entry {
        case signal(Message)
        case call(label: String, errorName: String?, errorMessage: String?)
    }

    var managedObjects: Value
    var entries: [Entry] = []

    var signals: [Message] {
        entries.compactMap { if case .signal(let message) = $0 { message } else { nil } }
    }

    static func load(_ name: String) throws -> Recording {
        guard let url = Bundle.module.url(forResource: name, withExtension: "jsonl", subdirectory: "Fixtures") else {
            throw FixtureError("no fixture \(name)")
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        var recording = Recording(managedObjects: .vardict([:]))
        for line in text.split(separator: "\n") {
            guard let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let kind = record["kind"] as? String
            else { throw FixtureError("bad line \(line)") }
            switch kind {
            case "managedObjects":
                recording.managedObjects = try decode((record["body"] as? [Any])?.first)
            case "signal":
                guard let path = record["path"] as? String, let interface = record["interface"] as? String,
                    let member = record["member"] as? String, let body = record["body"] as? [Any]
                else { throw FixtureError("bad signal \(line)") }
                var message = Message.signal(
                    path: try ObjectPath(path), interface: try InterfaceName(interface), member: try MemberName(member),
                    body: try body.map(decode))
                message.sender = ":1.0"
                recording.entries.append(.signal(message))
            case "call":
                recording.entries.append(
                    .call(
                        label: record["label"] as? String ?? "", errorName: record["error"] as? String,
                        errorMessage: record["message"] as? String))
            default:
                continue
            }
        }
        return recording
    }

    /// `[signature, payload]` to a value.
    static func decode(_ json: Any?) throws -> Value {
        guard let pair = json as? [Any], pair.count == 2, let text = pair[0] as? String,
            let type = try Signature(text).singleType
        else { throw FixtureError("bad value \(String(describing: json))") }
        return try decode(pair[1], as: type)
    }

    private static func decode(_ payload: Any, as type: DBusType) throws -> Value {
        func number() throws -> Int64 {
            guard let number = payload as? NSNumber else { throw FixtureError("not a number: \(payload)") }
            return number.int64Value
        }
        switch type {
        case .boolean: return .boolean((payload as? Bool) ?? false)
        case .byte: return .byte(UInt8(truncatingIfNeeded: try number()))
        case .int16: return .int16(Int16(truncatingIfNeeded: try number()))
        case .uint16: return .uint16(UInt16(truncatingIfNeeded: try number()))
        case .int32: return .int32(Int32(truncatingIfNeeded: try number()))
        case .uint32: return .uint32(UInt32(truncatingIfNeeded: try number()))
        case .int64: return .int64(try number())
        case .uint64: return .uint64(UInt64(truncatingIfNeeded: try number()))
        case .double: return .double((payload as? NSNumber)?.doubleValue ?? 0)
        case .string: return .string(payload as? String ?? "")
        case .objectPath: return .objectPath(try ObjectPath(payload as? String ?? ""))
        case .signature: return .signature(try Signature(payload as? String ?? ""))
        case .variant: return .variant(try decode(payload))
        case .array(.byte):
            let hex = Array((payload as? String ?? "").utf8)
            var bytes: [UInt8] = []
            var index = 0
            while index + 1 < hex.count {
                guard let byte = UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) else {
                    throw FixtureError("bad hex")
                }
                bytes.append(byte)
                index += 2
            }
            return .bytes(bytes)
        case .array(let element):
            return .array(element, try (payload as? [Any] ?? []).map { try decode($0) })
        case .dictionary(let key, let value):
            let entries = try (payload as? [Any] ?? []).map { item -> DictionaryEntry in
                guard let pair = item as? [Any], pair.count == 2 else { throw FixtureError("bad entry") }
                return DictionaryEntry(try decode(pair[0]), try decode(pair[1]))
            }
            return .dictionary(key: key, value: value, entries)
        case .structure:
            return .structure(try (payload as? [Any] ?? []).map { try decode($0) })
        case .unixFD:
            throw FixtureError("no file descriptors in recordings")
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
