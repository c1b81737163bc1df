import DBus
import Foundation
import FoundationXML
import TestSupport
import Testing

/// An exported object driven by clients nobody here wrote: systemd's busctl
/// and GLib's gdbus.
@Suite struct ObjectServerTests {
    func serve() async throws -> (TestBus, Connection) {
        let bus = try TestBus()
        let server = try await bus.connect()
        try await EchoService.serve(on: server)
        return (bus, server)
    }

    @Test func busctlCallsAMethod() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let result = try await run([
            "busctl", "--address=\(bus.daemon.address)", "call", "org.example.Echo", "/org/example/echo",
            "org.example.Echo", "Upper", "s", "notify on",
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == #"s "NOTIFY ON""#)
    }

    @Test func busctlGetsAndSetsProperties() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let address = "--address=\(bus.daemon.address)"
        let get = try await run(["busctl", address, "get-property", "org.example.Echo", "/org/example/echo", "org.example.Echo", "Count"])
        #expect(get.output.trimmingCharacters(in: .whitespacesAndNewlines) == "u 1")

        let set = try await run(["busctl", address, "set-property", "org.example.Echo", "/org/example/echo", "org.example.Echo", "Count", "u", "42"])
        #expect(set.status == 0, "\(set.error)")
        #expect(server.objects.property("Count", of: "org.example.Echo", at: "/org/example/echo") == .uint32(42))

        // The setter refuses values over 1000, with its own error.
        let refused = try await run(["busctl", address, "set-property", "org.example.Echo", "/org/example/echo", "org.example.Echo", "Count", "u", "5000"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("Count must be at most 1000"))

        let readOnly = try await run(["busctl", address, "set-property", "org.example.Echo", "/org/example/echo", "org.example.Echo", "Name", "s", "x"])
        #expect(readOnly.status != 0)
    }

    @Test func gdbusSeesTheErrorNameAndMessage() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let result = try await run([
            "gdbus", "call", "--address", bus.daemon.address, "--dest", "org.example.Echo", "--object-path",
            "/org/example/echo", "--method", "org.example.Echo.Fail", "org.bluez.Error.InProgress", "In Progress",
        ])
        #expect(result.status != 0)
        #expect(result.error.contains("org.bluez.Error.InProgress: In Progress"), "\(result.error)")
    }

    @Test func gdbusGetsManagedObjects() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        try server.objects.add(
            EchoService.interface, at: "/org/example/echo/child",
            properties: ["Count": .uint32(7), "Name": .string("child"), "Tags": .strings([])])
        let result = try await run([
            "gdbus", "call", "--address", bus.daemon.address, "--dest", "org.example.Echo", "--object-path", "/",
            "--method", "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("objectpath '/org/example/echo'"))
        #expect(result.output.contains("'Count': <uint32 7>"))
        #expect(result.output.contains("'Name': <'child'>"))
    }

    @Test func introspectionIsValidForBothTools() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let introspect = try await run(["busctl", "--address=\(bus.daemon.address)", "introspect", "org.example.Echo", "/org/example/echo"])
        #expect(introspect.status == 0, "\(introspect.error)")
        for line in [".Upper", ".Count", ".Tick", "org.freedesktop.DBus.Properties", "writable", "emits-invalidation"] {
            #expect(introspect.output.contains(line), "missing \(line)")
        }
        let tree = try await run(["busctl", "--address=\(bus.daemon.address)", "tree", "org.example.Echo"])
        #expect(tree.output.contains("/org/example/echo"), "\(tree.output)\(tree.error)")

        let xml = try await run([
            "gdbus", "introspect", "--address", bus.daemon.address, "--dest", "org.example.Echo", "--object-path", "/org/example",
            "--xml",
        ])
        #expect(xml.status == 0, "\(xml.error)")
        #expect(xml.output.contains(#"<node name="echo"/>"#))
        let parsed = try XMLDocument(xmlString: try await run([
            "gdbus", "introspect", "--address", bus.daemon.address, "--dest", "org.example.Echo",
            "--object-path", "/org/example/echo", "--xml",
        ]).output)
        #expect(try parsed.nodes(forXPath: "//method[@name='Sleep']/arg[@direction='in']/@type").first?.stringValue == "u")
    }

    @Test func monitorsSeePropertiesChangedAndInterfacesAdded() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let gdbusMonitor = try ChildProcess([
            "gdbus", "monitor", "--address", bus.daemon.address, "--dest", "org.example.Echo",
        ])
        let busctlMonitor = try ChildProcess(["busctl", "--address=\(bus.daemon.address)", "monitor", "org.example.Echo"])
        // Both tools need a moment to subscribe; keep changing until seen.
        var seen = false
        for round in 0..<50 where !seen {
            try server.objects.update(["Count": .uint32(UInt32(100 + round))], of: "org.example.Echo", at: "/org/example/echo")
            try await Task.sleep(for: .milliseconds(100))
            seen = gdbusMonitor.standardOutput.contains("org.freedesktop.DBus.Properties.PropertiesChanged")
                && busctlMonitor.standardOutput.contains("Member=PropertiesChanged")
        }
        #expect(gdbusMonitor.standardOutput.contains("{'Count': <uint32 1"), "\(gdbusMonitor.standardOutput)")
        #expect(busctlMonitor.standardOutput.contains("Member=PropertiesChanged"))

        try server.objects.update([:], of: "org.example.Echo", at: "/org/example/echo", invalidating: ["Tags"])
        #expect(await gdbusMonitor.waitForOutput(containing: "['Tags']"))

        try server.objects.add(EchoService.interface, at: "/org/example/echo/new", properties: ["Count": .uint32(3)])
        #expect(await gdbusMonitor.waitForOutput(containing: "InterfacesAdded (objectpath '/org/example/echo/new'"))
        server.objects.remove(at: "/org/example/echo/new")
        #expect(await gdbusMonitor.waitForOutput(containing: "InterfacesRemoved (objectpath '/org/example/echo/new', ['org.example.Echo'])"))
    }

    @Test func aSecondOwnerIsRefused() async throws {
        let (bus, server) = try await serve()
        defer { server.close() }
        let other = try await bus.connect()
        defer { other.close() }
        #expect(try await other.requestName(EchoService.name) == .exists)
        #expect(try await other.nameOwner(EchoService.name) == server.uniqueName)
        try await server.releaseName(EchoService.name)
        #expect(try await other.requestName(EchoService.name) == .primaryOwner)
        #expect(try await server.nameOwner("org.example.Nobody") == nil)
    }
}
