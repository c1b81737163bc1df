import DBus
import Glibc
import Synchronization
import TestSupport
import Testing

/// Descriptors polled by a connection's loop thread (`Connection.watch`)
/// and descriptors handed over in a reply (`UnixFD.transferring`).
@Suite struct DescriptorWatchTests {
    /// A connected pair of SOCK_SEQPACKET sockets, non-blocking unless asked.
    private static func socketPair(nonBlocking: Bool = true) throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        var type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw DBusError(.failed, "socketpair: errno \(errno)") }
        return (fds[0], fds[1])
    }

    private func send(_ bytes: [UInt8], on fd: Int32) -> Int {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the peer of `fd` has closed its end, waiting up to 10 s.
    /// Whether the other end of `fd` hangs up within a minute: it takes
    /// milliseconds alone, but a full `swift test` starts hundreds of
    /// tests at once and this one has waited past 10 s there; a socket
    /// never closed still fails, after the minute.
    private func peerHungUp(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 60_000) == 1 && descriptor.revents & Int16(POLLHUP) != 0
    }

    /// What a watch reported: packets read on `.readable`, and how it ended.
    final class Recorder: Sendable {
        let packets = Mutex<[[UInt8]]>([])
        let ends = Mutex<[DescriptorEvent]>([])

        func handle(_ event: DescriptorEvent, _ fd: UnixFD) {
            switch event {
            case .readable:
                var buffer = [UInt8](repeating: 0, count: 64)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, 64, Int32(MSG_DONTWAIT)) }
                    guard count > 0 else { break }
                    packets.withLock { $0.append(Array(buffer[..<count])) }
                }
            case .hangup, .connectionClosed:
                ends.withLock { $0.append(event) }
            }
        }
    }

    @Test func aWatchReadsEachPacketThenSeesTheHangUp() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer { connection.close() }
        let (watched, peer) = try Self.socketPair()
        let recorder = Recorder()
        let watch = try connection.watch(UnixFD(watched)) { recorder.handle($0, $1) }
        #expect(send([1, 2, 3], on: peer) == 3)
        #expect(send([4], on: peer) == 1)
        #expect(await eventually { recorder.packets.withLock { $0 } == [[1, 2, 3], [4]] })
        close(peer)
        #expect(await eventually { recorder.ends.withLock { $0 } == [.hangup] })
        watch.cancel()
    }

    @Test func cancellingAWatchClosesTheDescriptor() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer { connection.close() }
        let (watched, peer) = try Self.socketPair()
        defer { close(peer) }
        let recorder = Recorder()
        let watch = try connection.watch(UnixFD(watched)) { recorder.handle($0, $1) }
        watch.cancel()
        #expect(peerHungUp(peer))
        #expect(recorder.ends.withLock { $0 }.isEmpty, "a cancelled watch is not told it ended")
    }

    @Test func closingTheConnectionEndsEveryWatch() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        let (watched, peer) = try Self.socketPair()
        defer { close(peer) }
        let recorder = Recorder()
        _ = try connection.watch(UnixFD(watched)) { recorder.handle($0, $1) }
        connection.close()
        #expect(recorder.ends.withLock { $0 } == [.connectionClosed])
        #expect(peerHungUp(peer))
        let (late, latePeer) = try Self.socketPair()
        defer { close(latePeer) }
        #expect(throws: DBusError.self) { try connection.watch(UnixFD(late)) { _, _ in } }
        #expect(peerHungUp(latePeer), "a watch refused on a closed connection closes its descriptor")
    }

    /// A method answers with one end of a socket pair it hands over: the
    /// caller gets a working descriptor, and once the caller closes it the
    /// server's other end sees the hang-up (the server kept no copy).
    @Test func aReplyCarriesATransferredDescriptor() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer {
            client.close()
            server.close()
        }
        #expect(client.canPassUnixFDs)
        let kept = Mutex<Int32>(-1)
        try server.objects.add(
            ExportedInterface(
                "org.example.Sockets",
                methods: [
                    .init("Open", outputs: [.init("fd", .unixFD)]) { _ in
                        let (ours, theirs) = try Self.socketPair(nonBlocking: false)
                        kept.withLock { $0 = ours }
                        return [.unixFD(.transferring(theirs))]
                    }
                ]),
            at: "/org/example/sockets")
        let reply = try await client.call(
            destination: server.uniqueName, path: "/org/example/sockets", interface: "org.example.Sockets", method: "Open")
        let received = try #require(reply.first?.unixFD)
        let ours = kept.withLock { $0 }
        defer { close(ours) }
        #expect(send([9, 8], on: received.rawValue) == 2)
        var buffer = [UInt8](repeating: 0, count: 8)
        let count = buffer.withUnsafeMutableBytes { recv(ours, $0.baseAddress, 8, 0) }
        #expect(Array(buffer[..<max(0, count)]) == [9, 8])
        close(received.rawValue)
        #expect(peerHungUp(ours))
    }

    /// The reply comes after the caller gave up: nobody takes its
    /// descriptor, so the connection closes it and the server's end of the
    /// pair sees the hang-up (bluetoothd then drops an AcquireNotify socket).
    @Test func aLateReplysDescriptorIsClosed() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer {
            client.close()
            server.close()
        }
        let kept = Mutex<Int32>(-1)
        try server.objects.add(
            ExportedInterface(
                "org.example.Sockets",
                methods: [
                    .init("OpenSlowly", outputs: [.init("fd", .unixFD)]) { _ in
                        let (ours, theirs) = try Self.socketPair(nonBlocking: false)
                        kept.withLock { $0 = ours }
                        try? await Task.sleep(for: .milliseconds(500))
                        return [.unixFD(.transferring(theirs))]
                    }
                ]),
            at: "/org/example/sockets")
        await #expect(throws: DBusError.self) {
            try await client.call(
                destination: server.uniqueName, path: "/org/example/sockets", interface: "org.example.Sockets",
                method: "OpenSlowly", timeout: .milliseconds(50))
        }
        #expect(await eventually { kept.withLock { $0 } >= 0 })
        let ours = kept.withLock { $0 }
        defer { close(ours) }
        #expect(peerHungUp(ours))
    }
}
