import Foundation
import Glibc
import TestSupport
import Testing

/// The state directory as an operator meets it: a store the gateway cannot
/// use stops the start with an explanation, and a clean stop leaves the
/// directory for the next start.
@Suite struct StateDirectoryTests {
    func startFailure(stateDirectory: String) async throws -> (status: Int32?, log: String) {
        let bus = try TestBus()
        defer { bus.daemon.stop() }
        let process = try ChildProcess([
            GatewayUnderTest.executable, "serve", "--bus", bus.address, "--listen", "127.0.0.1:0", "--state-dir", stateDirectory,
        ])
        let status = await process.wait(timeout: .seconds(30))
        process.kill()
        return (status, process.standardError)
    }

    @Test func aCorruptStoreIsAStartupErrorNamingTheFile() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/blegateway.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: file))
        let failure = try await startFailure(stateDirectory: directory)
        #expect(failure.status == 2)
        #expect(failure.log.contains(file), "\(failure.log)")
        #expect(failure.log.contains("aside"), "the fix is given: \(failure.log)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(repeating: 0x5A, count: 8192), "never reset")
    }

    @Test func anUnwritableDirectoryIsAStartupError() async throws {
        // A path under a regular file can never be created, even by root.
        let parent = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: parent + "/file"))
        let failure = try await startFailure(stateDirectory: parent + "/file/state")
        #expect(failure.status == 2)
        #expect(failure.log.contains(parent + "/file/state"), "\(failure.log)")
        #expect(failure.log.contains("--state-dir"), "the fix is given: \(failure.log)")
    }

    @Test func aStoreInUseIsAStartupErrorAndAStoppedGatewayLeavesItForTheNext() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await GatewayUnderTest.start(stateDirectory: directory)
        let busy = try await startFailure(stateDirectory: directory)
        #expect(busy.status == 2)
        #expect(busy.log.contains(directory), "\(busy.log)")
        #expect(busy.log.contains("in use") || busy.log.contains("another"), "\(busy.log)")
        #expect(await first.stop() == 0, "\(first.process.standardError.suffix(1500))")
        #expect(first.process.standardError.contains("the state store is closed"), "\(first.process.standardError.suffix(1500))")

        let second = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(await second.stop() == 0, "\(second.process.standardError.suffix(1500))")
    }

    @Test func simulateWithoutAStateDirectoryUsesATemporaryOne() async throws {
        let process = try ChildProcess([
            GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:0", "--log-level", "debug",
        ])
        defer { process.kill() }
        #expect(await GatewayUnderTest.waitForPort(process) != nil, "\(process.standardError)")
        await GatewayUnderTest.waitUntilHandlingSignals(process)
        let log = process.standardError
        guard let range = log.range(of: "state store "), let end = log[range.upperBound...].range(of: "/blegateway.sqlite") else {
            Issue.record("no state store line: \(log)")
            return
        }
        let directory = String(log[range.upperBound..<end.lowerBound])
        #expect(log.contains("temporary"))
        #expect(FileManager.default.fileExists(atPath: directory + "/blegateway.sqlite"))
        process.signal(SIGTERM)
        let status = await process.wait(timeout: .seconds(20))
        #expect(status == 0, "\(process.standardError.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: directory), "removed on exit")
    }
}
