import BlueZ
import GatewayCore
import Testing

@testable import GatewayAPI

/// The one table from the core's typed errors to problems, which the
/// routes and the MQTT bridge both answer with.
@Suite struct CommandProblemTests {
    @Test func anInvalidParameterIsA400NamingIt() {
        let problem = Problem(GatewayCommandError.invalidParameter(name: "timeout_ms", reason: "must be positive"))
        #expect(problem.status == .badRequest && problem.kind == .invalidRequest)
        #expect(problem.detail == "timeout_ms: must be positive")
        #expect(problem.invalidParameters == [Problem.InvalidParameter(name: "timeout_ms", reason: "must be positive")])
    }

    @Test func notFoundAndNoAdapter() {
        let missing = Problem(GatewayCommandError.notFound("C4:7C:8D:6A:3E:01 on hci0 is not kept connected"))
        #expect(missing.status == .notFound && missing.kind == .notFound)
        #expect(missing.detail == "C4:7C:8D:6A:3E:01 on hci0 is not kept connected")
        let noAdapter = Problem(GatewayCommandError.noAdapter("no adapter to keep the device on"))
        #expect(noAdapter.status == .serviceUnavailable && noAdapter.kind == .adapterUnavailable)
    }

    @Test func aBlueZErrorPassesThroughWithItsDBusName() {
        let error = BlueZError(
            .notConnected, "not connected", dbusName: "org.bluez.Error.NotConnected", attError: nil)
        let problem = Problem(GatewayCommandError.bluez(error))
        #expect(problem == Problem(error))
        #expect(problem.status == .conflict && problem.dbusError == "org.bluez.Error.NotConnected")
        #expect(String(decoding: problem.json, as: UTF8.self).contains(#""dbus_error":"org.bluez.Error.NotConnected""#))
    }
}
