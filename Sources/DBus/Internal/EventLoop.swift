import AsyncPrimitives
import CDBus
import Glibc
import Synchronization

/// One libdbus connection and the thread that runs it.
///
/// Only the loop thread ever calls libdbus with this connection: it opens it,
/// marshals and sends every outgoing message, reads, dispatches, and closes.
/// Other threads hand it work through `inbox` and wake it with an eventfd.
/// Keeping libdbus on one thread matters because libdbus calls its watch
/// functions with its connection lock held and frees watches on disconnect
/// from whichever thread did the I/O; with a single thread neither can race.
///
/// The loop polls the connection's watches and the eventfd, so it sleeps
/// while there is nothing to do and never blocks inside libdbus (a thread
/// blocked in `dbus_connection_read_write_dispatch(-1)` would hold back
/// messages queued by other threads).
final class EventLoop: @unchecked Sendable {
    // Safe to share because: `inbox` is a Mutex; `wakeFD` is only written
    // with write(2); `thread` is read and written under the inbox lock;
    // `onMessage`, `onClose` and `onTurnEnded` are written before the loop thread starts
    // (pthread_create orders those writes before the thread runs), read on
    // it, and cleared on it; everything else is `onLoop`, whose every
    // access checks that it is made on the loop thread.

    enum Command {
        /// Send a message. With a reply handler the message is a method call
        /// whose reply (or error) is passed to the handler on the loop thread.
        case send(Message, reply: ReplyHandler?, id: UInt64, timeoutMilliseconds: Int32, cancellation: CallCancellation?)
        /// Give up waiting for the reply of call `id`.
        case cancel(id: UInt64)
        /// Poll a descriptor beside the connection's (`Connection.watch`).
        case watchDescriptor(id: UInt64, fd: UnixFD, handler: DescriptorHandler)
        /// Stop polling it, and close it.
        case unwatchDescriptor(id: UInt64)
        case close
    }

    typealias DescriptorHandler = @Sendable (DescriptorEvent, UnixFD) -> Void

    typealias ReplyHandler = @Sendable (Result<Message, any Error>) -> Void

    private struct Inbox {
        var commands: [Command] = []
        var wakePending = false
        var closed = false
    }

    private struct Watch {
        let pointer: OpaquePointer
        var fd: Int32
        var events: Int16
        var enabled: Bool
    }

    private struct Timeout {
        let pointer: OpaquePointer
        var deadline: Int64?  // milliseconds, monotonic; nil while disabled
    }

    private let inbox = Mutex(Inbox())
    private let dropped = Atomic(false)
    private let wakeFD: Int32
    /// The bus socket's descriptor, once connected (-1 before); with
    /// `wakeFD`, what the connection holds open (tests check both close).
    private let socketFD = Atomic<Int32>(-1)
    private var thread: pthread_t?

    /// What only the loop thread touches.
    private struct LoopState {
        var connection: OpaquePointer?
        var watches: [Watch] = []
        var timeouts: [Timeout] = []
        var pendingCalls: [UInt64: (call: OpaquePointer, handler: ReplyHandler)] = [:]
        /// Descriptors polled for their owners (`Connection.watch`), by id.
        var descriptors: [UInt64: (fd: UnixFD, handler: DescriptorHandler)] = [:]
        var running = true
    }

    private let loopThread = LoopThread()
    private var onLoop: LoopBound<LoopState>

    private var connection: OpaquePointer? {
        _read { yield onLoop.value.connection }
        _modify { yield &onLoop.value.connection }
    }
    private var watches: [Watch] {
        _read { yield onLoop.value.watches }
        _modify { yield &onLoop.value.watches }
    }
    private var timeouts: [Timeout] {
        _read { yield onLoop.value.timeouts }
        _modify { yield &onLoop.value.timeouts }
    }
    private var pendingCalls: [UInt64: (call: OpaquePointer, handler: ReplyHandler)] {
        _read { yield onLoop.value.pendingCalls }
        _modify { yield &onLoop.value.pendingCalls }
    }
    private var descriptors: [UInt64: (fd: UnixFD, handler: DescriptorHandler)] {
        _read { yield onLoop.value.descriptors }
        _modify { yield &onLoop.value.descriptors }
    }
    private var running: Bool {
        _read { yield onLoop.value.running }
        _modify { yield &onLoop.value.running }
    }

    /// Receives every incoming message that is not a reply (signals and
    /// method calls), on the loop thread; returns whether it handled it.
    /// Set before `start`, cleared when the loop ends.
    var onMessage: (@Sendable (Message) -> Bool)?
    /// Called once on the loop thread when the connection ends. Set before
    /// `start`.
    var onClose: (@Sendable () -> Void)?
    /// The owner's end-of-turn work (`Connection.Configuration.endOfTurn`),
    /// called on the loop thread before each poll and once after the
    /// connection ended. Set before `start`, cleared when the loop ends.
    var onTurnEnded: (@Sendable () -> Void)?

    let counters = Counters()
    /// Whether the connection negotiated Unix fd passing (a Unix socket
    /// transport; not TCP). Set on the loop thread before `start` returns.
    let passesUnixFDs = Atomic(false)

    init() throws(DBusError) {
        let fd = cdbus_eventfd()
        guard fd >= 0 else { throw DBusError(.failed, "eventfd failed: errno \(errno)") }
        wakeFD = fd
        onLoop = LoopBound(LoopState(), thread: loopThread)
    }

    /// Opens a connection to `address` on a new loop thread and registers on
    /// the bus; returns the connection's unique name.
    func start(address: BusAddress) async throws -> BusName {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<BusName, any Error>) in
                spawnThread { self.run(address: address, started: continuation) }
            }
        } catch {
            // The thread has ended (or is about to): join it, so that a
            // failed attempt (a supervisor retrying while the bus is down)
            // leaves no thread behind.
            shutdown()
            throw error
        }
    }

    deinit {
        close(wakeFD)
    }

    // MARK: Called from any thread

    /// Queues a command for the loop thread. Returns false if the loop has
    /// stopped (the command was not queued).
    @discardableResult
    func enqueue(_ command: Command) -> Bool {
        let needsWake: Bool? = inbox.withLock { inbox in
            guard !inbox.closed else { return nil }
            inbox.commands.append(command)
            defer { inbox.wakePending = true }
            return !inbox.wakePending
        }
        guard let needsWake else { return false }
        if needsWake { wake() }
        return true
    }

    var isClosed: Bool { inbox.withLock { $0.closed } }

    /// The descriptors the connection holds: its wake-up eventfd and, once
    /// connected, the bus socket.
    var ownDescriptors: [Int32] {
        let socket = socketFD.load(ordering: .acquiring)
        return socket >= 0 ? [wakeFD, socket] : [wakeFD]
    }

    /// Whether the bus ended the connection (libdbus delivered
    /// `org.freedesktop.DBus.Local.Disconnected`), as opposed to `shutdown`.
    var droppedByBus: Bool { dropped.load(ordering: .acquiring) }

    /// Stops the loop, closes the connection and joins the thread. Calls
    /// still waiting fail with `Disconnected`. Safe to call more than once and
    /// from any thread except the loop thread itself.
    func shutdown() {
        enqueue(.close)
        let joinable: pthread_t? = inbox.withLock { _ in
            defer { thread = nil }
            return thread
        }
        if let joinable {
            if pthread_equal(joinable, pthread_self()) != 0 {
                // Called from a handler on the loop thread: the loop exits on
                // its own after this command; it cannot join itself.
                pthread_detach(joinable)
            } else {
                pthread_join(joinable, nil)
            }
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func spawnThread(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        // The handle is stored under the lock the new thread takes before
        // it reports anything, so whoever joins it finds it.
        let result = inbox.withLock { _ -> Int32 in
            var handle = pthread_t()
            let result = pthread_create(&handle, nil, { argument in
                guard let argument else { return nil }
                let body = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue()
                body.run()
                return nil
            }, box)
            if result == 0 { thread = handle }
            return result
        }
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    // MARK: Loop thread

    private func run(address: BusAddress, started: CheckedContinuation<BusName, any Error>) {
        loopThread.bind()
        cdbus_set_thread_name("dbus-loop")
        let uniqueName: BusName
        do {
            uniqueName = try openConnection(address)
        } catch {
            inbox.withLock { $0.closed = true }
            // The handlers hold the object server, which holds this loop:
            // without a connection they will never run.
            onMessage = nil
            onClose = nil
            onTurnEnded = nil
            if let connection {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                self.connection = nil
            }
            started.resume(throwing: error)
            return
        }
        started.resume(returning: uniqueName)

        while running {
            processInbox()
            dispatchIncoming()
            guard running else { break }
            onTurnEnded?()
            pollOnce()
        }
        finish()
        // The last turn: what finishing told its handlers (calls failed,
        // streams interrupted) is delivered too. Then the owner's work goes
        // with the connection.
        onTurnEnded?()
        onTurnEnded = nil
    }

    private func openConnection(_ address: BusAddress) throws -> BusName {
        dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }

        let opened: OpaquePointer?
        switch address {
        case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let text):
            opened = dbus_connection_open_private(text, &error)
            if let opened, dbus_bus_register(opened, &error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw Self.error(from: error, otherwise: "could not register on the bus at \(text)")
            }
        }
        guard let opened else {
            throw Self.error(from: error, otherwise: "could not connect to the bus (\(address))")
        }
        connection = opened
        dbus_connection_set_exit_on_disconnect(opened, 0)
        passesUnixFDs.store(dbus_connection_can_send_type(opened, CDBUS_TYPE_UNIX_FD) != 0, ordering: .releasing)
        var socket: Int32 = -1
        if dbus_connection_get_socket(opened, &socket) != 0 { socketFD.store(socket, ordering: .releasing) }

        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            opened,
            { watch, context in EventLoop.from(context).addWatch(watch) },
            { watch, context in EventLoop.from(context).removeWatch(watch) },
            { watch, context in EventLoop.from(context).toggleWatch(watch) },
            context, nil)
        dbus_connection_set_timeout_functions(
            opened,
            { timeout, context in EventLoop.from(context).addTimeout(timeout) },
            { timeout, context in EventLoop.from(context).removeTimeout(timeout) },
            { timeout, context in EventLoop.from(context).toggleTimeout(timeout) },
            context, nil)
        dbus_connection_add_filter(
            opened,
            { _, message, context in
                guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                return EventLoop.from(context).filter(message)
            },
            context, nil)

        guard let cName = dbus_bus_get_unique_name(opened) else {
            throw DBusError(.failed, "the bus gave no unique name")
        }
        return BusName(unchecked: String(cString: cName))
    }

    private static func error(from error: CDBus.DBusError, otherwise text: String) -> DBusError {
        guard dbus_error_is_set(withUnsafePointer(to: error) { $0 }) != 0, let name = error.name else {
            return DBusError(.failed, text)
        }
        let message = error.message.map { String(cString: $0) } ?? text
        return DBusError(ErrorName(rawValue: String(cString: name)) ?? .failed, message)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> EventLoop {
        // The context is the loop itself, passed unretained: libdbus only
        // calls back while the connection is open, and the loop outlives it.
        Unmanaged<EventLoop>.fromOpaque(context.unsafelyUnwrapped).takeUnretainedValue()
    }

    private func processInbox() {
        let commands = inbox.withLock { inbox in
            inbox.wakePending = false
            return inbox.commands.isEmpty ? [] : inbox.commands.swapAndClear()
        }
        for command in commands {
            switch command {
            case .send(let message, let reply, let id, let timeout, let cancellation):
                if let cancellation, cancellation.isCancelled {
                    reply?(.failure(CancellationError()))
                } else {
                    send(message, reply: reply, id: id, timeoutMilliseconds: timeout)
                }
            case .cancel(let id):
                if let pending = pendingCalls.removeValue(forKey: id) {
                    dbus_pending_call_cancel(pending.call)
                    dbus_pending_call_unref(pending.call)
                    pending.handler(.failure(CancellationError()))
                }
            case .watchDescriptor(let id, let fd, let handler):
                descriptors[id] = (fd, handler)
            case .unwatchDescriptor(let id):
                if let entry = descriptors.removeValue(forKey: id) { Self.closeDescriptor(entry.fd) }
            case .close:
                running = false
            }
        }
    }

    static func closeDescriptor(_ fd: UnixFD) {
        _ = Glibc.close(fd.rawValue)
    }

    static func closeDescriptors(in value: Value) {
        switch value {
        case .unixFD(let fd): closeDescriptor(fd)
        case .array(_, let values), .structure(let values): for value in values { closeDescriptors(in: value) }
        case .dictionary(_, _, let entries):
            for entry in entries {
                closeDescriptors(in: entry.key)
                closeDescriptors(in: entry.value)
            }
        case .variant(let inner): closeDescriptors(in: inner)
        default: break
        }
    }

    private func send(_ message: Message, reply: ReplyHandler?, id: UInt64, timeoutMilliseconds: Int32) {
        guard let connection, running else {
            reply?(.failure(DBusError(.disconnected, "the connection is closed")))
            return
        }
        let cMessage: OpaquePointer
        do {
            cMessage = try MessageCoder.encode(message)
        } catch {
            reply?(.failure(error))
            return
        }
        defer { dbus_message_unref(cMessage) }
        if message.signature.rawValue.utf8.contains(UInt8(ascii: "h")),
            dbus_connection_can_send_type(connection, CDBUS_TYPE_UNIX_FD) == 0
        {
            reply?(.failure(DBusError(.notSupported, "this connection cannot pass Unix file descriptors")))
            return
        }
        counters.sent.add(1, ordering: .relaxed)

        guard let reply else {
            if dbus_connection_send(connection, cMessage, nil) == 0 {
                counters.sendFailures.add(1, ordering: .relaxed)
            }
            return
        }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, cMessage, &pending, timeoutMilliseconds) != 0,
            let pending
        else {
            // libdbus gives no pending call when the connection is already
            // disconnected.
            reply(.failure(DBusError(.disconnected, "the connection to the bus is lost")))
            return
        }
        pendingCalls[id] = (pending, reply)
        // The context is released by libdbus (through the free function)
        // when the pending call is finalized.
        let context = Unmanaged.passRetained(ReplyContext(loop: self, id: id)).toOpaque()
        dbus_pending_call_set_notify(
            pending,
            { _, context in
                guard let context else { return }
                let reply = Unmanaged<ReplyContext>.fromOpaque(context).takeUnretainedValue()
                reply.loop.completeCall(reply.id)
            },
            context,
            { context in
                guard let context else { return }
                Unmanaged<ReplyContext>.fromOpaque(context).release()
            })
        // The reply may have completed before the notify was set (for example
        // on a connection that dropped); libdbus would then never call it.
        if dbus_pending_call_get_completed(pending) != 0 {
            completeCall(id)
        }
    }

    /// Completes call `id` exactly once: the pending entry is removed first,
    /// so a second notification finds nothing.
    private func completeCall(_ id: UInt64) {
        guard let pending = pendingCalls.removeValue(forKey: id) else { return }
        let cReply = dbus_pending_call_steal_reply(pending.call)
        dbus_pending_call_unref(pending.call)
        guard let cReply else {
            pending.handler(.failure(DBusError(.noReply, "no reply")))
            return
        }
        let reply = MessageCoder.decode(cReply)
        dbus_message_unref(cReply)
        counters.received.add(1, ordering: .relaxed)
        if let error = reply.error {
            pending.handler(.failure(error))
        } else {
            pending.handler(.success(reply))
        }
    }

    private func filter(_ cMessage: OpaquePointer) -> DBusHandlerResult {
        let message = MessageCoder.decode(cMessage)
        counters.received.add(1, ordering: .relaxed)
        // A reply that reaches the filter answers no call waiting here (it
        // was cancelled or timed out): nobody will take the descriptors it
        // carries, and a peer holding the other end of a socket (bluetoothd's
        // AcquireNotify) must see it closed.
        if message.kind == .methodReturn, message.signature.rawValue.utf8.contains(UInt8(ascii: "h")) {
            for value in message.body { Self.closeDescriptors(in: value) }
        }
        if message.kind == .signal, message.interface?.rawValue == "org.freedesktop.DBus.Local",
            message.member?.rawValue == "Disconnected"
        {
            dropped.store(true, ordering: .releasing)
            running = false
            return DBUS_HANDLER_RESULT_HANDLED
        }
        return onMessage?(message) == true ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    private func dispatchIncoming() {
        guard let connection else { return }
        while running, dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    private func pollOnce() {
        var polled = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        for watch in watches where watch.enabled {
            polled.append(pollfd(fd: watch.fd, events: watch.events, revents: 0))
        }
        let firstWatched = polled.count
        var watched: [UInt64] = []
        if !descriptors.isEmpty {
            watched.reserveCapacity(descriptors.count)
            for (id, entry) in descriptors {
                watched.append(id)
                polled.append(pollfd(fd: entry.fd.rawValue, events: Int16(POLLIN), revents: 0))
            }
        }
        let now = Self.monotonicMilliseconds()
        var timeout: Int32 = -1
        if let next = timeouts.compactMap(\.deadline).min() {
            timeout = Int32(clamping: max(0, next - now))
        }
        let count = poll(&polled, nfds_t(polled.count), timeout)
        if count < 0 { return }  // EINTR: go round again

        if polled[0].revents != 0 {
            var counter: UInt64 = 0
            _ = read(wakeFD, &counter, 8)
        }
        for descriptor in polled[1..<firstWatched] where descriptor.revents != 0 {
            handleReady(fd: descriptor.fd, revents: descriptor.revents)
        }
        for (offset, id) in watched.enumerated() where polled[firstWatched + offset].revents != 0 {
            handleWatched(id, revents: polled[firstWatched + offset].revents)
        }
        fireDueTimeouts()
    }

    private func handleReady(fd: Int32, revents: Int16) {
        var flags: UInt32 = 0
        if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
        if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
        if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
        if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
        // Handling one watch can remove others on the same fd (on
        // disconnect), so each is looked up again before it is used.
        for pointer in watches.filter({ $0.fd == fd && $0.enabled }).map(\.pointer) {
            guard let watch = watches.first(where: { $0.pointer == pointer }), watch.enabled else { continue }
            let relevant = flags & (UInt32(bitPattern: Int32(dbus_watch_get_flags(pointer))) | DBUS_WATCH_ERROR.rawValue | DBUS_WATCH_HANGUP.rawValue)
            if relevant != 0 { dbus_watch_handle(pointer, relevant) }
        }
    }

    /// A watched descriptor is ready: its data first, then its end. A
    /// handler may have cancelled another watch meanwhile, so each is looked
    /// up again.
    private func handleWatched(_ id: UInt64, revents: Int16) {
        guard let entry = descriptors[id] else { return }
        if revents & Int16(POLLIN) != 0 { entry.handler(.readable, entry.fd) }
        guard revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0, descriptors.removeValue(forKey: id) != nil else { return }
        entry.handler(.hangup, entry.fd)
        Self.closeDescriptor(entry.fd)
    }

    private func fireDueTimeouts() {
        let now = Self.monotonicMilliseconds()
        for pointer in timeouts.filter({ ($0.deadline ?? .max) <= now }).map(\.pointer) {
            guard timeouts.contains(where: { $0.pointer == pointer }) else { continue }
            dbus_timeout_handle(pointer)
            // libdbus timeouts repeat until removed: re-arm if still there.
            if let index = timeouts.firstIndex(where: { $0.pointer == pointer }), timeouts[index].deadline != nil {
                timeouts[index].deadline = now + Int64(dbus_timeout_get_interval(pointer))
            }
        }
    }

    private func finish() {
        inbox.withLock { $0.closed = true }
        for (_, pending) in pendingCalls {
            dbus_pending_call_cancel(pending.call)
            dbus_pending_call_unref(pending.call)
            pending.handler(.failure(DBusError(.disconnected, "the connection to the bus was closed")))
        }
        pendingCalls.removeAll()
        // Commands that arrived after the close still get an answer.
        for command in inbox.withLock({ $0.commands.swapAndClear() }) {
            switch command {
            case .send(_, let reply?, _, _, _):
                reply(.failure(DBusError(.disconnected, "the connection to the bus was closed")))
            case .watchDescriptor(let id, let fd, let handler):
                descriptors[id] = (fd, handler)
            case .unwatchDescriptor(let id):
                if let entry = descriptors.removeValue(forKey: id) { Self.closeDescriptor(entry.fd) }
            default:
                break
            }
        }
        for entry in descriptors.values {
            entry.handler(.connectionClosed, entry.fd)
            Self.closeDescriptor(entry.fd)
        }
        descriptors.removeAll()
        if let connection {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            self.connection = nil
        }
        // The handlers hold the object server, which holds this loop.
        onMessage = nil
        onClose?()
        onClose = nil
    }

    // MARK: libdbus callbacks (loop thread)

    private func addWatch(_ pointer: OpaquePointer?) -> dbus_bool_t {
        guard let pointer else { return 0 }
        watches.append(Watch(pointer: pointer, fd: 0, events: 0, enabled: false))
        toggleWatch(pointer)
        return 1
    }

    private func removeWatch(_ pointer: OpaquePointer?) {
        watches.removeAll { $0.pointer == pointer }
    }

    private func toggleWatch(_ pointer: OpaquePointer?) {
        guard let pointer, let index = watches.firstIndex(where: { $0.pointer == pointer }) else { return }
        let flags = UInt32(dbus_watch_get_flags(pointer))
        var events: Int16 = 0
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
        watches[index].fd = dbus_watch_get_unix_fd(pointer)
        watches[index].events = events
        watches[index].enabled = dbus_watch_get_enabled(pointer) != 0
    }

    private func addTimeout(_ pointer: OpaquePointer?) -> dbus_bool_t {
        guard let pointer else { return 0 }
        timeouts.append(Timeout(pointer: pointer, deadline: nil))
        toggleTimeout(pointer)
        return 1
    }

    private func removeTimeout(_ pointer: OpaquePointer?) {
        timeouts.removeAll { $0.pointer == pointer }
    }

    private func toggleTimeout(_ pointer: OpaquePointer?) {
        guard let pointer, let index = timeouts.firstIndex(where: { $0.pointer == pointer }) else { return }
        timeouts[index].deadline =
            dbus_timeout_get_enabled(pointer) != 0
            ? Self.monotonicMilliseconds() + Int64(dbus_timeout_get_interval(pointer)) : nil
    }

    /// A call timeout in libdbus's terms: milliseconds, at least 1, or
    /// infinite.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let total = duration.millisecondsRoundedUp
        if total >= Int(Int32.max) { return CDBUS_TIMEOUT_INFINITE_VALUE }
        return Int32(max(1, total))
    }

    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// Set when the task waiting for a call is cancelled, so that a call not yet
/// sent when the cancellation arrives is never sent.
final class CallCancellation: Sendable {
    private let flag = Atomic(false)
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
    func cancel() { flag.store(true, ordering: .releasing) }
}

/// Message counts of one connection.
final class Counters: Sendable {
    let sent = Atomic(0)
    let received = Atomic(0)
    let sendFailures = Atomic(0)
}

/// What a pending call's notification needs to find its call.
private final class ReplyContext {
    unowned let loop: EventLoop
    let id: UInt64
    init(loop: EventLoop, id: UInt64) {
        self.loop = loop
        self.id = id
    }
}

/// A closure run as a thread's body.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

extension Array {
    /// Returns the elements and leaves the array empty, keeping no copy.
    mutating func swapAndClear() -> [Element] {
        var taken: [Element] = []
        swap(&taken, &self)
        return taken
    }
}
