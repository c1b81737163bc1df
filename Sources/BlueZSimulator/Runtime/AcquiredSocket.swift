import DBus
import Glibc

/// bluetoothd's end of an `AcquireNotify` or `AcquireWrite` socket pair
/// (`struct sock_io` in src/gatt-client.c): the client got the other end in
/// the reply.
///
/// Two descriptors of the one end: `sendFD`, kept by the simulator to send
/// notifications (closed by `close()`, on the actor), and a duplicate the
/// bus connection's loop watches for the client's writes and for the
/// client closing its end (closed by the loop when the watch ends). Each is
/// closed by the one place that uses it, so neither side can see a closed
/// or reused descriptor number.
final class AcquiredSocket {
    let owner: BusName
    let mtu: UInt16
    private(set) var sendFD: Int32
    var watch: DescriptorWatch?

    init(owner: BusName, mtu: UInt16, sendFD: Int32) {
        self.owner = owner
        self.mtu = mtu
        self.sendFD = sendFD
    }

    /// Sends one value as one packet, as `notify_io_cb` does: the socket is
    /// non-blocking, so a value that does not fit (the client is not
    /// reading) is dropped, as bluetoothd drops it ("sendmsg: Resource
    /// temporarily unavailable" in its log).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        guard sendFD >= 0 else { return false }
        let sent = bytes.withUnsafeBytes { buffer in
            Glibc.send(sendFD, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        return sent == bytes.count
    }

    /// Ends bluetoothd's side: both directions shut down (the client reads
    /// the end of the stream and sees POLLHUP, as `io_shutdown` does on a
    /// disconnection), then closed. Idempotent.
    func close() {
        watch?.cancel()
        watch = nil
        guard sendFD >= 0 else { return }
        _ = shutdown(sendFD, Int32(SHUT_RDWR))
        _ = Glibc.close(sendFD)
        sendFD = -1
    }

    /// A connected pair of non-blocking SOCK_SEQPACKET sockets, as
    /// `create_sock` makes them; nil (with errno) if the kernel refused.
    static func pair() -> (bluetoothd: Int32, client: Int32)? {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }
}
