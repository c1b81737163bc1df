@testable import BlueZ
import Glibc
import Testing

/// The reader of acquired notification sockets, on a socket pair in place
/// of bluetoothd's: it queues what the loop has not taken, up to its
/// limit, and counts what it had to drop beyond it.
@Suite struct NotifySocketReaderTests {
    /// Nobody takes from the queue while more packets come than it holds:
    /// the first `queueLimit` wait, in order, and the rest are counted as
    /// dropped (the figure behind `blegateway_notifications_dropped_total`).
    @Test func packetsBeyondTheQueueLimitAreCountedAsDropped() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let wake = try #require(NotifySocketReader.pipe())
        let reader = NotifySocketReader.shared
        let droppedBefore = reader.droppedPackets
        let id = try #require(reader.add(fd: pair[0], wake: wake.write))
        let extra = 2_000
        let sent = NotifySocketReader.queueLimit + extra
        for index in 0..<sent {
            var packet = [UInt8(index >> 16 & 0xff), UInt8(index >> 8 & 0xff), UInt8(index & 0xff)]
                // Blocks while the socket is full, until the reader drains it.
            #expect(write(pair[1], &packet, packet.count) == packet.count)
        }
        // The writes are done once the reader has read all but what the
        // socket still holds; then the last few come.
        let deadline = ContinuousClock.now + .seconds(30)
        while reader.droppedPackets - droppedBefore < extra, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(reader.droppedPackets - droppedBefore == extra)
        let (packets, more, _) = reader.take(id, limit: sent)
        #expect(!more)
        #expect(packets.count == NotifySocketReader.queueLimit)
        #expect(packets.first == [0, 0, 0])
        #expect(packets.last == [UInt8((NotifySocketReader.queueLimit - 1) >> 16 & 0xff), 0xff, 0xff])
        reader.remove(id)
        close(pair[1])
        close(wake.read)
    }
}
