import Synchronization

/// What a watched descriptor reports (`Connection.watch(_:handler:)`).
public enum DescriptorEvent: Sendable, Hashable {
    /// Data can be read without blocking. The handler should read until the
    /// descriptor would block: the next event comes only when more arrives.
    case readable
    /// The peer closed its end, or the descriptor failed. Whatever was
    /// buffered has been offered as `.readable` first. The watch has ended
    /// and the descriptor is closed after the handler returns.
    case hangup
    /// The connection closed (or was closed) while the descriptor was
    /// watched. The descriptor is closed after the handler returns.
    case connectionClosed
}

/// A descriptor watched by a connection's loop thread; `cancel()` stops
/// the watch and closes the descriptor (on that thread, so the handler
/// never sees a closed or reused descriptor number).
public final class DescriptorWatch: Sendable {
    private weak let loop: EventLoop?
    let id: UInt64
    private let cancelled = Atomic(false)

    static let nextID = Atomic<UInt64>(1)

    init(loop: EventLoop, id: UInt64) {
        self.loop = loop
        self.id = id
    }

    /// Stops the watch and closes the descriptor. The handler is not called
    /// again once the loop thread has taken the cancellation (a call already
    /// running on it finishes). Idempotent.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop?.enqueue(.unwatchDescriptor(id: id))
    }
}

extension Connection {
    /// Watches `fd` on this connection's loop thread, the thread that
    /// already polls the bus socket: a descriptor received from a peer (an
    /// `AcquireNotify` socket) is read with no thread of its own, in order
    /// with the connection's messages.
    ///
    /// The watch takes the descriptor over: it is closed when the watch ends
    /// (`cancel()`, a hang-up, or the connection closing). Pass a plain
    /// descriptor, not one made with `UnixFD.transferring` (that one has an
    /// owner of its own). `handler` runs on
    /// the loop thread with the event and the descriptor; it must not block.
    /// Throws `.disconnected` (and closes `fd`) when the connection is closed.
    public func watch(
        _ fd: UnixFD, handler: @escaping @Sendable (DescriptorEvent, UnixFD) -> Void
    ) throws(DBusError) -> DescriptorWatch {
        let id = DescriptorWatch.nextID.add(1, ordering: .relaxed).oldValue
        let descriptor = UnixFD(fd.rawValue)
        guard loop.enqueue(.watchDescriptor(id: id, fd: descriptor, handler: handler)) else {
            EventLoop.closeDescriptor(descriptor)
            throw DBusError(.disconnected, "the connection is closed")
        }
        return DescriptorWatch(loop: loop, id: id)
    }
}
