import DBus

/// A small service exported by tests: methods that echo, fail, and sleep;
/// properties; a signal.
enum EchoService {
    static let name: BusName = "org.example.Echo"
    static let path: ObjectPath = "/org/example/echo"
    static let interfaceName: InterfaceName = "org.example.Echo"

    static let interface = ExportedInterface(
        interfaceName,
        methods: [
            .init("Echo", inputs: [.init("value", .variant)], outputs: [.init("value", .variant)]) { call in
                call.arguments
            },
            .init("Upper", inputs: [.init("text", .string)], outputs: [.init("text", .string)]) { call in
                [.string((call.arguments[0].string ?? "").uppercased())]
            },
            .init("Fail", inputs: [.init("name", .string), .init("message", .string)]) { call in
                let name = try ErrorName(call.arguments[0].string ?? "")
                throw DBusError(name, call.arguments[1].string ?? "")
            },
            .init("Sleep", inputs: [.init("milliseconds", .uint32)], outputs: [.init("slept", .uint32)]) { call in
                let milliseconds = call.arguments[0].uint32 ?? 0
                try await Task.sleep(for: .milliseconds(Int(milliseconds)))
                return [.uint32(milliseconds)]
            },
            .init("WrongReply", outputs: [.init("value", .string)]) { _ in
                [.int32(1)]
            },
        ],
        properties: [
            .init("Count", .uint32, access: .readWrite) { _, value in
                guard let count = value.uint32, count <= 1000 else {
                    throw DBusError(.invalidArgs, "Count must be at most 1000")
                }
            },
            .init("Name", .string),
            .init("Tags", .array(.string), changeSignal: .invalidates),
        ],
        signals: [.init("Tick", arguments: [.init("count", .uint32)])]
    )

    /// Exports the service on `connection` and takes its name.
    static func serve(on connection: Connection) async throws {
        connection.objects.addObjectManager(at: .root)
        try connection.objects.add(
            interface, at: path,
            properties: ["Count": .uint32(1), "Name": .string("echo"), "Tags": .strings(["a"])])
        let reply = try await connection.requestName(name)
        precondition(reply == .primaryOwner)
    }
}
