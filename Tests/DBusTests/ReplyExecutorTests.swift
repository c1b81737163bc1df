import DBus
import Glibc
import Synchronization
import TestSupport
import Testing

/// The calling thread's name (the D-Bus loop names its thread `dbus-loop`).
private func threadName() -> String {
    let fd = open("/proc/thread-self/comm", O_RDONLY)
    guard fd >= 0 else { return "?" }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = read(fd, &buffer, buffer.count)
    return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingSuffix("\n")
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

@Suite struct ReplyExecutorTests {
    private static func upper(_ client: Connection, _ text: String) async throws -> [Value] {
        try await client.call(
            destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
            method: "Upper", arguments: [.string(text)])
    }

    @Test func aTaskThatPrefersItFinishesOnTheLoopThreadThatGotTheReply() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let preferring = try await Task(executorPreference: ReplyExecutor.shared) {
            let reply = try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Upper", arguments: [.string("read")])
            return (reply, threadName())
        }.value
        #expect(preferring.0 == [.string("READ")])
        #expect(preferring.1 == "dbus-loop")

        // Without the preference, a reply resumes its task on the pool.
        let plain = try await Task {
            _ = try await Self.upper(client, "read")
            return threadName()
        }.value
        #expect(plain != "dbus-loop")
    }

    @Test func resumedAnywhereElseItRunsOnThePool() async throws {
        let name = try await Task(executorPreference: ReplyExecutor.shared) {
            try await Task.sleep(for: .milliseconds(2))
            return threadName()
        }.value
        #expect(name != "dbus-loop")
    }

    @Test func manyCallersAllGetTheirReplies() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let replies = try await withThrowingTaskGroup(of: [Value].self) { group in
            for index in 0..<64 {
                group.addTask(executorPreference: ReplyExecutor.shared) {
                    // Two calls in a row: the second is sent from the loop
                    // thread, where the first reply left the task.
                    _ = try await Self.upper(client, "first \(index)")
                    return try await Self.upper(client, "second \(index)")
                }
            }
            var all: [[Value]] = []
            for try await reply in group { all.append(reply) }
            return all
        }
        #expect(replies.count == 64)
        #expect(Set(replies.compactMap { $0.first?.string }) == Set((0..<64).map { "SECOND \($0)" }))
    }

    @Test func aCallFailingAsTheConnectionClosesStillResumesItsTask() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close() }
        try await EchoService.serve(on: server)
        // Answered in 30 s: the close fails it first, on the loop thread.
        let waiting = Task(executorPreference: ReplyExecutor.shared) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Sleep", arguments: [.uint32(30_000)])
        }
        try await Task.sleep(for: .milliseconds(50))
        client.close()
        await #expect(throws: DBusError.self) { try await waiting.value }
    }
}
