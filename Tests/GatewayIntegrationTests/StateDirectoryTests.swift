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

    @Test func anEmptyStoreFileIsAStartupErrorNotANewStore() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/blegateway.sqlite"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let failure = try await startFailure(stateDirectory: directory)
        #expect(failure.status == 2)
        #expect(failure.log.contains(file) && failure.log.contains("empty file"), "\(failure.log)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).isEmpty, "never adopted")
    }

    /// Random bytes in the write-ahead log of a killed gateway: SQLite
    /// drops the commits from the damaged frame on, and the next start
    /// says so at critical level, with what was held before and now.
    @Test func aDamagedWriteAheadLogIsReportedLoudlyAtTheNextStart() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        for index in 0..<40 {
            let body = #"{"device":"AA:00:00:00:01:\#(String(format: "%02X", index))","characteristic":"2a37"}"#
            #expect(try await gateway.request("POST", "/v1/subscriptions", json: body).status == 201)
        }
        await gateway.crash()
        let wal = directory + "/blegateway.sqlite-wal"
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wal)))
        #expect(log.count > 40 * 1024, "the log holds the commits: \(log.count) bytes")
        var generator = SystemRandomNumberGenerator()
        for index in log.count / 2..<log.count / 2 + 64 { log[index] = generator.next() }
        try Data(log).write(to: URL(fileURLWithPath: wal))

        let restarted = try await GatewayUnderTest.start(stateDirectory: directory)
        let held = try await restarted.get("/v1/subscriptions").array.count
        #expect(held < 40)
        let report = restarted.process.standardError.components(separatedBy: "\n").first { $0.contains("was rolled back") }
        #expect(report?.contains("critical") == true, "\(restarted.process.standardError.suffix(3000))")
        #expect(report?.contains("40 standing subscription(s)") == true, "\(report ?? "")")
        #expect(report?.contains("\(held) and") == true, "\(report ?? "")")
        #expect(await restarted.stop() == 0)
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

    /// `--no-state`: no store is opened, kept connections and standing
    /// subscriptions work in memory, and `--state-dir` beside it is refused.
    @Test func noStateKeepsEverythingInMemory() async throws {
        let process = try ChildProcess(
            [GatewayUnderTest.executable, "serve", "--simulate", "--no-state", "--listen", "127.0.0.1:0", "--log-level", "debug"],
            environment: ["BLEGATEWAY_STATE_DIR": "/nonexistent/never-made"])
        defer { process.kill() }
        let port = try #require(await GatewayUnderTest.waitForPort(process)?.1, "\(process.standardError)")
        await GatewayUnderTest.waitUntilHandlingSignals(process)
        #expect(process.standardError.contains("no state store"), "\(process.standardError.suffix(1500))")
        #expect(!process.standardError.contains("blegateway.sqlite"))
        let curl = try await run([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", #"{"device":"C4:7C:8D:6A:3E:01","characteristic":"2a37"}"#, "http://127.0.0.1:\(port)/v1/subscriptions",
        ])
        #expect(curl.output == "201", "\(curl.output) \(curl.error)")
        process.signal(SIGTERM)
        #expect(await process.wait(timeout: .seconds(20)) == 0, "\(process.standardError.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent/never-made"))

        let both = try ChildProcess([GatewayUnderTest.executable, "serve", "--simulate", "--no-state", "--state-dir", "/tmp/x"])
        #expect(await both.wait(timeout: .seconds(20)) == 64, "\(both.standardError)")
        #expect(both.standardError.contains("--no-state and --state-dir exclude each other"), "\(both.standardError)")
    }

    /// The store becomes unwritable while the gateway runs: every write of
    /// its file fails, as on a full disk (here a file-size limit of 0 set
    /// on the running gateway with prlimit, which the gateway meets as
    /// EFBIG). The routes that change kept connections and standing
    /// subscriptions answer a 500 `state-store-failed` problem naming the
    /// file, and change nothing; the rest of the API goes on; once the
    /// store can be written again, so can they.
    @Test func aStoreThatCannotBeWrittenAfterTheStartAnswersAProblemAndChangesNothing() async throws {
        let gateway = try await GatewayUnderTest.start()
        let device = "/v1/devices/\(TestScenario.strap)"
        let subscription = #"{"device":"\#(TestScenario.strap)","characteristic":"2a37","mode":"notify"}"#
        let created = try await gateway.request("POST", "/v1/subscriptions", json: subscription)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? Int)

        func limitFileSize(_ limit: String) async throws {
            let result = try await run(["prlimit", "--pid", "\(gateway.process.pid)", "--fsize=\(limit):"])
            #expect(result.status == 0, "prlimit: \(result.error)")
        }
        try await limitFileSize("0")
        func expectStoreProblem(_ answer: HTTPAnswer, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(answer.status == 500, "\(answer)", sourceLocation: sourceLocation)
            #expect(answer.contentType == "application/problem+json", "\(answer)", sourceLocation: sourceLocation)
            #expect(answer.object["type"] as? String == "urn:blegateway:problem:state-store-failed", "\(answer)", sourceLocation: sourceLocation)
            #expect(answer.object["title"] as? String == "The gateway's state store cannot save the change", sourceLocation: sourceLocation)
            #expect(answer.object["instance"] as? String == path, "\(answer)", sourceLocation: sourceLocation)
            let detail = answer.object["detail"] as? String ?? ""
            #expect(detail.contains(gateway.stateDirectory + "/blegateway.sqlite"), "names the file: \(detail)", sourceLocation: sourceLocation)
        }
        let keep = try await gateway.request("PUT", device + "/keep")
        expectStoreProblem(keep, device + "/keep")
        #expect(try await gateway.get(device + "/keep").status == 404, "not kept")
        #expect(try await gateway.get("/v1/kept-connections").array.isEmpty)
        let another = try await gateway.request(
            "POST", "/v1/subscriptions", json: #"{"device":"\#(TestScenario.strap)","characteristic":"2a19"}"#)
        expectStoreProblem(another, "/v1/subscriptions")
        let removal = try await gateway.request("DELETE", "/v1/subscriptions/\(id)")
        expectStoreProblem(removal, "/v1/subscriptions/\(id)")
        #expect(try await gateway.get("/v1/subscriptions").array.compactMap { $0["id"] as? Int } == [id], "nothing changed")
        let problems = try await SpecValidator.problems([("Problem", keep.text), ("Problem", another.text), ("Problem", removal.text)])
        #expect(problems.isEmpty, "\(problems)")
        #expect(try await gateway.get("/v1/adapters").status == 200, "the rest of the API goes on")

        // Writable again: the same requests succeed.
        try await limitFileSize("unlimited")
        #expect(try await gateway.request("PUT", device + "/keep").status == 201)
        #expect(try await gateway.request("DELETE", "/v1/subscriptions/\(id)").status == 204)
        #expect(try await gateway.request("DELETE", device + "/keep").status == 204)
        #expect(await gateway.stop() == 0, "\(gateway.process.standardError.suffix(1500))")
    }
}
