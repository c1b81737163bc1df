import DBus
import Glibc
import Synchronization

/// The responder's end of an `AcquireNotify` socket pair, as bluetoothd 5.66
/// makes it (src/gatt-client.c: `create_sock`, `notify_io_cb`): a
/// non-blocking SOCK_SEQPACKET pair, one packet per value, and a value that
/// does not fit (the client is not reading) dropped, as bluetoothd drops it.
///
/// The emitter sends from the main thread while the bus connection's loop
/// sees the client close its end; the descriptor is used and closed under
/// one lock, so a send can never reach a closed or reused descriptor number.
final class NotifySocket: Sendable {
    private let descriptor = Mutex<Int32>(-1)
    /// Values the socket had no room for, as bluetoothd drops them.
    let dropped = Atomic<Int>(0)

    var isAcquired: Bool { descriptor.withLock { $0 >= 0 } }

    /// A new pair; the responder keeps one end, the client gets the other.
    /// Nil when a socket is already acquired or the kernel refused.
    func acquire() -> (ours: Int32, theirs: Int32)? {
        descriptor.withLock { current in
            guard current < 0 else { return nil }
            var fds: [Int32] = [-1, -1]
            let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return nil }
            current = fds[0]
            return (fds[0], fds[1])
        }
    }

    /// Sends `bytes` as one packet if a socket is acquired; false when none
    /// is (the value goes out as a signal instead).
    func send(_ bytes: [UInt8]) -> Bool {
        descriptor.withLock { fd in
            guard fd >= 0 else { return false }
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent < 0 { dropped.add(1, ordering: .relaxed) }
            return true
        }
    }

    /// The client closed its end (or the responder stops): ours is closed.
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = shutdown(fd, Int32(SHUT_RDWR))
            _ = Glibc.close(fd)
            fd = -1
        }
    }
}
