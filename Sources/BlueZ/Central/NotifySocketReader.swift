import Glibc
import Metrics
import Synchronization

/// Reads every acquired notification socket of the process on a thread of
/// its own, into a queue per socket, and wakes the bus connection's loop to
/// deliver what it read.
///
/// bluetoothd's end of an AcquireNotify socket holds about 278 values and
/// drops what does not fit (its send buffer, which the reader cannot
/// enlarge). The loop thread does all the work of a delivery (the event
/// log, the streams, the store's queue), so on a busy machine it can be off
/// a core, or behind, for longer than that. This thread only moves packets
/// from the kernel to memory, a few microseconds each, so it gets a core
/// back soon after it wakes, and a busy gateway queues values where the
/// socket would have dropped them, as dbus-daemon queues the signal path's.
///
/// Each socket's packets keep their order; the loop takes them in order
/// (`take`). The reader closes a socket's descriptor itself once it is
/// removed, so a descriptor number is never read after it was reused.
final class NotifySocketReader: Sendable {
    /// The one reader of the process, started with the first socket.
    static let shared = NotifySocketReader()

    /// At most this many packets wait for the loop per socket; beyond, the
    /// newest are dropped, as the socket would drop them.
    static let queueLimit = 65_536

    /// Packets dropped because their socket's queue was full (the loop
    /// that delivers them was that far behind): what bluetoothd's socket
    /// would have dropped, counted here where it cannot be.
    /// `blegateway_notifications_dropped_total`; made with the central, so
    /// that it reads 0 before the first drop.
    static let droppedCounter = Counter(label: "blegateway_notifications_dropped_total")

    /// Every packet dropped since the process started (the counter's value).
    var droppedPackets: Int { dropped.load(ordering: .relaxed) }
    private let dropped = Atomic<Int>(0)

    /// How long the reader waits before reading sockets that held more
    /// than one value again (bluetoothd's socket fills in 9 ms at 30,000
    /// values a second).
    static let batchPauseNanoseconds = 500_000

    private struct Socket {
        let fd: Int32
        /// Written (one byte) when packets or the hang-up are ready; the
        /// loop watches the other end. Owned by the reader.
        let wake: Int32
        var packets: [[UInt8]] = []
        var hungUp = false
        /// Removed by its owner: the reader closes `fd` and `wake`.
        var removed = false

        // Both change the queue in place (through the dictionary's
        // subscript): a copy of the socket would copy its whole backlog.

        /// Adds what was read, up to the limit; returns how many packets
        /// did not fit.
        mutating func queue(_ read: [[UInt8]], hungUp ended: Bool) -> Int {
            let room = max(0, NotifySocketReader.queueLimit - packets.count)
            packets += read.prefix(room)
            if ended { hungUp = true }
            return max(0, read.count - room)
        }

        /// The first `limit` packets, taken off the queue.
        mutating func take(limit: Int) -> [[UInt8]] {
            guard packets.count > limit else {
                defer { packets = [] }
                return packets
            }
            defer { packets.removeFirst(limit) }
            return Array(packets[..<limit])
        }
    }

    private struct State {
        var sockets: [UInt64: Socket] = [:]
        var nextID: UInt64 = 1
        /// Wakes the thread from poll when a socket is added or removed;
        /// open while the thread runs.
        var control: (read: Int32, write: Int32)?
    }

    private let state = Mutex(State())

    private init() {}

    /// A non-blocking pipe whose ends close on exec; nil if the kernel refused.
    static func pipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }

    /// Starts reading `fd` (the reader owns it from now on) and writing a
    /// byte to `wake` (owned too) whenever packets or the hang-up wait.
    /// Returns the socket's id for `take` and `remove`; nil when the thread
    /// could not start (the caller then still owns both descriptors).
    func add(fd: Int32, wake: Int32) -> UInt64? {
        let added = state.withLock { state -> (id: UInt64, start: Bool)? in
            // The thread runs while there are sockets: it ends, closing its
            // pipe, once the last one is removed, so an idle process holds
            // neither.
            let start = state.control == nil
            if start {
                guard let control = Self.pipe() else { return nil }
                state.control = control
            }
            let id = state.nextID
            state.nextID += 1
            state.sockets[id] = Socket(fd: fd, wake: wake)
            Self.poke(state)
            return (id, start)
        }
        guard let added else { return nil }
        if added.start { startThread() }
        return added.id
    }

    /// Stops reading the socket; the reader closes it (and its wake).
    func remove(_ id: UInt64) {
        state.withLock { state in
            state.sockets[id]?.removed = true
            Self.poke(state)
        }
    }

    /// The packets read so far (at most `limit`), whether more wait, and
    /// whether the socket hung up with nothing left to take after them.
    func take(_ id: UInt64, limit: Int) -> (packets: [[UInt8]], more: Bool, hungUp: Bool) {
        state.withLock { state in
            guard state.sockets[id]?.removed == false,
                let packets = state.sockets[id]?.take(limit: limit), let socket = state.sockets[id]
            else { return ([], false, false) }
            return (packets, !socket.packets.isEmpty, socket.hungUp && socket.packets.isEmpty)
        }
    }

    /// Wakes the loop of socket `id` again: it took part of a long queue
    /// and returns to the bus before taking the rest.
    func wakeAgain(_ id: UInt64) {
        state.withLock { state in
            // Under the lock: the reader closes `wake` only under it.
            guard let socket = state.sockets[id], !socket.removed else { return }
            var byte: UInt8 = 1
            _ = write(socket.wake, &byte, 1)
        }
    }

    /// Wakes the thread (under the lock, which it closes the pipe under).
    private static func poke(_ state: State) {
        guard let control = state.control else { return }
        var byte: UInt8 = 1
        _ = write(control.write, &byte, 1)
    }

    private func startThread() {
        let box = Unmanaged.passRetained(ReaderBody(self)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            let reader = Unmanaged<ReaderBody>.fromOpaque(argument).takeRetainedValue().reader
            nameThisThread("notify-reader")
            raiseThisThreadsPriority()
            reader.run()
            return nil
        }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(handle)
    }

    /// The thread's loop: poll the sockets, move what they hold into their
    /// queues, wake the loop of each one that got something.
    private func run() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            // Removed sockets are closed here, on the only thread that reads
            // them; with none left the thread ends.
            let next = state.withLock { state -> (control: Int32, watched: [(UInt64, Int32)])? in
                for (id, socket) in state.sockets where socket.removed {
                    close(socket.fd)
                    close(socket.wake)
                    state.sockets[id] = nil
                }
                guard let control = state.control else { return nil }
                if state.sockets.isEmpty {
                    close(control.read)
                    close(control.write)
                    state.control = nil
                    return nil
                }
                return (control.read, state.sockets.compactMap { id, socket in socket.hungUp ? nil : (id, socket.fd) })
            }
            guard let (control, watched) = next else { return }
            var polled = [pollfd(fd: control, events: Int16(POLLIN), revents: 0)]
            polled += watched.map { pollfd(fd: $0.1, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { continue }
            if polled[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                while read(control, &sink, sink.count) > 0 {}
            }
            var busiest = 0
            for (index, (id, fd)) in watched.enumerated() where polled[index + 1].revents != 0 {
                var packets: [[UInt8]] = []
                var ended = polled[index + 1].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    if count > 0 {
                        packets.append(Array(buffer[..<count]))
                        continue
                    }
                    // 0: the other end shut down; EAGAIN: all read for now.
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { ended = true }
                    break
                }
                let (wake, overflow) = state.withLock { state -> (Int32?, Int) in
                    guard state.sockets[id]?.removed == false else { return (nil, 0) }
                    let overflow = state.sockets[id]?.queue(packets, hungUp: ended) ?? 0
                    return (state.sockets[id]?.wake, overflow)
                }
                if overflow > 0 {
                    dropped.add(overflow, ordering: .relaxed)
                    Self.droppedCounter.increment(by: overflow)
                }
                if let wake {
                    var byte: UInt8 = 1
                    _ = write(wake, &byte, 1)
                }
                busiest = max(busiest, packets.count)
            }
            // Values came faster than one at a wake-up: let a few more
            // arrive before reading again, so that a fast stream costs the
            // reader and the loop a wake-up per batch rather than per value
            // (a lone value, the usual case, is read the moment it comes).
            if busiest > 1 {
                var pause = timespec(tv_sec: 0, tv_nsec: Self.batchPauseNanoseconds)
                nanosleep(&pause, nil)
            }
        }
    }
}

/// Puts the calling thread ahead of the gateway's others where the process
/// may: its work per wake-up is a few `recv` calls, and being late by 278
/// values loses values. First the lowest real-time priority (SCHED_FIFO 1,
/// as audio servers give the threads that move their data: it runs as soon
/// as it wakes, and blocks in `poll` or pauses between batches otherwise;
/// root, CAP_SYS_NICE or an RLIMIT_RTPRIO allow it), else nice -5 (Linux
/// keeps a nice value per thread, and `0` is the calling one); otherwise it
/// stays as it is.
private func raiseThisThreadsPriority() {
    var parameters = sched_param(sched_priority: 1)
    if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -5)
}

/// Names the calling thread (what `top -H` and perf show).
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = name.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}

/// Carries the reader into its thread.
private final class ReaderBody {
    let reader: NotifySocketReader
    init(_ reader: NotifySocketReader) { self.reader = reader }
}
