import DBus
import Foundation
import Glibc
import Testing
import TestSupport

/// The `bluez-sim` program, run as users run it.
@Suite struct ExecutableTests {
    /// `bluez-sim`, built beside the test bundle.
    static var program: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let executable = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        var directory = (executable as NSString).deletingLastPathComponent
        while !directory.isEmpty, directory != "/" {
            let candidate = directory + "/bluez-sim"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return "bluez-sim"
    }

    @Test func servesTheDefaultScenarioUntilTerminated() async throws {
        let bus = try TestBus()
        let sim = try ChildProcess([Self.program, "--bus", bus.address, "--timing", "0.01"])
        defer { sim.kill() }
        #expect(await sim.waitForOutput(containing: "serving org.bluez with 1 adapter(s), 8 device(s)"), "\(sim.standardError)")
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        let tree = try await run(["busctl", "--system", "--list", "tree", "org.bluez"], environment: environment)
        #expect(tree.output.contains("/org/bluez/hci0"))
        sim.signal(SIGTERM)
        #expect(await sim.wait(timeout: .seconds(10)) == 0)
        let observer = try await bus.connect()
        defer { observer.close() }
        #expect(try await observer.nameOwner("org.bluez") == nil)
    }

    @Test func aBadScenarioIsReportedWithItsPosition() async throws {
        let path = "/tmp/bluez-sim-bad-\(getpid()).yaml"
        try "devices:\n  - address: \"11:22:33:44:55:66\"\n    rssi: loud\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let result = try await run([Self.program, "--bus", "unix:path=/nonexistent", "--scenario", path])
        #expect(result.status != 0)
        #expect(result.error.contains("\(path):3:11: devices[0].rssi: expected an integer"), "\(result.error)")
    }

    @Test func helpAndTheDefaultScenario() async throws {
        let help = try await run([Self.program, "--help"])
        #expect(help.output.contains("--scenario <file>") && help.output.contains("DBUS_SYSTEM_BUS_ADDRESS"))
        let printed = try await run([Self.program, "--print-default-scenario"])
        #expect(printed.status == 0 && printed.output.contains("Polar H10 6A3E01"))
    }
}
