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

    @Test func aLimitIsTheClients429OrTheGateways507() {
        let mine = Problem(GatewayCommandError.limitReached(LimitReached(.client, detail: "this client holds 16 kept devices")))
        #expect(mine.status == .tooManyRequests && mine.kind == .quotaExceeded)
        #expect(mine.detail == "this client holds 16 kept devices")
        let all = Problem(GatewayCommandError.limitReached(LimitReached(.gateway, detail: "the gateway holds 32 kept devices")))
        #expect(all.status == .insufficientStorage && all.kind == .capacityExhausted)
    }

    @Test func aStoreFailureChangedNothingAndAFullDiskIs507() {
        let failed = Problem(GatewayCommandError.stateStore(StateStoreFailure(message: "state.db is read-only", diskFull: false)))
        #expect(failed.status == .internalServerError && failed.kind == .stateStoreFailed)
        #expect(failed.detail == "nothing was changed: state.db is read-only")
        let full = Problem(GatewayCommandError.stateStore(StateStoreFailure(message: "the disk is full", diskFull: true)))
        #expect(full.status == .insufficientStorage && full.kind == .stateStoreFailed)
    }

    @Test func theFleetsSilenceIs504AndItsAbsence503() {
        let late = Problem(GatewayCommandError.timeout("the broker did not confirm the fleet's keep in time"))
        #expect(late.status == .gatewayTimeout && late.kind == .timeout)
        let away = Problem(GatewayCommandError.unavailable("the fleet cannot be reached: offline"))
        #expect(away.status == .serviceUnavailable && away.kind == .unavailable)
        #expect(away.detail == "the fleet cannot be reached: offline")
    }

    @Test func textThatIsNotJSONIsA400() throws {
        var failure: JSONParseError?
        do {
            _ = try JSON.parse(Array("{\"value\":".utf8))
        } catch {
            failure = error
        }
        let problem = Problem(try #require(failure))
        #expect(problem.status == .badRequest && problem.kind == .invalidRequest)
        #expect(problem.detail == "the body is not valid JSON")
    }
}
