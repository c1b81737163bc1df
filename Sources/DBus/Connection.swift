import AsyncPrimitives
import Synchronization

/// A connection to a D-Bus message bus.
///
/// Every method may be called from any thread or task. The connection runs
/// one private thread that owns the libdbus connection (see `EventLoop`);
/// calls, signals and exported objects all go through it.
///
/// ```swift
/// let bus = try await Connection.connect(to: .system)
/// let reply = try await bus.call(
///     destination: "org.bluez", path: "/org/bluez/hci0",
///     interface: "org.freedesktop.DBus.Properties", method: "Get",
///     arguments: [.string("org.bluez.Adapter1"), .string("Powered")])
/// ```
public final class Connection: Sendable {
    /// The connection's unique name on the bus (`:1.42`).
    public let uniqueName: BusName
    public let address: BusAddress
    /// The objects this connection exports.
    public let objects: ObjectServer

    let loop: EventLoop
    let router: SignalRouter
    let end: ConnectionEnd
    private let callSlots: AsyncSemaphore
    private let nextCallID = Atomic<UInt64>(1)

    /// How it was set up.
    public let configuration: Configuration

    /// The default time to wait for a reply, as libdbus's default.
    public static let defaultTimeout: Duration = .seconds(25)

    /// Connects to a bus and registers on it.
    ///
    /// - Parameter maxPendingCalls: how many calls may wait for replies at
    ///   once; further calls wait for a free slot. The system bus refuses more
    ///   than 128 pending replies per connection, so the default stays below.
    public static func connect(to address: BusAddress, maxPendingCalls: Int = 100) async throws -> Connection {
        try await connect(to: address, configuration: Configuration(maxPendingCalls: maxPendingCalls))
    }

    /// Connects to a bus and registers on it, set up by `configuration`
    /// (its pending-call limit, its end-of-turn work).
    public static func connect(to address: BusAddress, configuration: Configuration) async throws -> Connection {
        let loop = try EventLoop()
        loop.onTurnEnded = configuration.endOfTurn
        let router = SignalRouter()
        let objects = ObjectServer(loop: loop)
        loop.onMessage = { message in
            switch message.kind {
            case .signal:
                router.route(message)
                return false
            case .methodCall:
                objects.handle(message)
                return true
            case .methodReturn, .error:
                return false
            }
        }
        let end = ConnectionEnd()
        loop.onClose = { [unowned loop] in
            let reason =
                loop.droppedByBus
                ? DBusError(.disconnected, "the bus closed the connection (dbus-daemon stopped or restarted)")
                : DBusError(.disconnected, "the connection to the bus was closed")
            // Signal handlers learn first, so that whoever waits for the
            // end (a supervisor) finds their state already updated.
            router.finishAll(reason)
            end.finish(reason)
        }
        let name = try await loop.start(address: address)
        return Connection(
            uniqueName: name, address: address, loop: loop, router: router, objects: objects, end: end,
            configuration: configuration)
    }

    private init(
        uniqueName: BusName, address: BusAddress, loop: EventLoop, router: SignalRouter, objects: ObjectServer,
        end: ConnectionEnd, configuration: Configuration
    ) {
        self.uniqueName = uniqueName
        self.address = address
        self.loop = loop
        self.router = router
        self.objects = objects
        self.end = end
        self.configuration = configuration
        self.callSlots = AsyncSemaphore(slots: max(1, configuration.maxPendingCalls))
    }

    deinit {
        loop.shutdown()
    }

    /// Closes the connection: calls still waiting fail with `Disconnected`,
    /// signal streams end, the loop thread is joined. Idempotent.
    public func close() {
        loop.shutdown()
    }

    /// Whether the connection is open (not closed, and the bus did not drop it).
    public var isConnected: Bool { !loop.isClosed }

    /// Whether Unix file descriptors can travel on this connection (a Unix
    /// socket transport negotiates it; TCP cannot). A peer's reply that
    /// carries one (`AcquireNotify`) never reaches a connection that cannot.
    public var canPassUnixFDs: Bool { loop.passesUnixFDs.load(ordering: .acquiring) }

    /// Waits until the connection has ended and returns why: the bus
    /// dropped it (libdbus reported `org.freedesktop.DBus.Local.Disconnected`:
    /// dbus-daemon stopped or restarted) or `close()` was called. Returns at
    /// once for a connection that has already ended. Cancelling the waiting
    /// task returns early (a `.disconnected` error saying so) and leaves the
    /// connection open.
    public func waitUntilClosed() async -> DBusError {
        await end.wait()
    }

    /// Whether the bus (not this process) ended the connection.
    public var wasDroppedByBus: Bool { loop.isClosed && loop.droppedByBus }

    /// Messages sent and received so far, for tests and benchmarks.
    public var statistics: Statistics {
        Statistics(
            messagesSent: loop.counters.sent.load(ordering: .relaxed),
            messagesReceived: loop.counters.received.load(ordering: .relaxed))
    }

    public struct Statistics: Sendable, Hashable {
        public var messagesSent: Int
        public var messagesReceived: Int
    }

    // MARK: Calls

    /// Sends a method call and waits for its reply.
    ///
    /// Throws `DBusError` for an error reply (its name and message kept), for
    /// `NoReply` after `timeout`, and for `Disconnected`; throws
    /// `CancellationError` when the task is cancelled.
    public func call(_ message: Message, timeout: Duration = Connection.defaultTimeout) async throws -> Message {
        precondition(message.kind == .methodCall, "call(_:) sends method calls")
        try await callSlots.acquire()
        defer { callSlots.release() }
        let id = nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue
        let cancellation = CallCancellation()
        let milliseconds = EventLoop.milliseconds(timeout)
        let start = ContinuousClock.now
        do {
            let reply = try await awaitReply(message, id: id, milliseconds: milliseconds, cancellation: cancellation)
            CallMetrics.record(message, since: start, error: nil)
            return reply
        } catch {
            CallMetrics.record(message, since: start, error: error)
            throw error
        }
    }

    /// Sends a call on the loop thread and waits for its reply, cancelling
    /// it there when the task is cancelled.
    private func awaitReply(
        _ message: Message, id: UInt64, milliseconds: Int32, cancellation: CallCancellation
    ) async throws -> Message {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message, any Error>) in
                let queued = loop.enqueue(
                    .send(
                        message, reply: { continuation.resume(with: $0) }, id: id,
                        timeoutMilliseconds: milliseconds, cancellation: cancellation))
                if !queued {
                    continuation.resume(throwing: DBusError(.disconnected, "the connection to the bus is closed"))
                }
            }
        } onCancel: {
            cancellation.cancel()
            loop.enqueue(.cancel(id: id))
        }
    }

    /// Calls a method and returns the reply's arguments.
    public func call(
        destination: BusName, path: ObjectPath, interface: InterfaceName, method: MemberName,
        arguments: [Value] = [], timeout: Duration = Connection.defaultTimeout
    ) async throws -> [Value] {
        let message = Message.methodCall(
            destination: destination, path: path, interface: interface, member: method, body: arguments)
        return try await call(message, timeout: timeout).body
    }

    /// Sends a message without waiting for anything: a signal, or a method
    /// call whose `noReplyExpected` is set. Throws `Disconnected` if the
    /// connection is closed; encoding errors are detected on the loop thread
    /// and the message is then dropped.
    public func send(_ message: Message) throws(DBusError) {
        for value in message.body { try value.validate() }
        guard loop.enqueue(.send(message, reply: nil, id: 0, timeoutMilliseconds: 0, cancellation: nil)) else {
            throw DBusError(.disconnected, "the connection to the bus is closed")
        }
    }

    /// Emits a signal from `path`.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [Value] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        try send(
            .signal(path: path, interface: interface, member: member, body: arguments, destination: destination))
    }

    // MARK: Signals

    /// Subscribes to the messages matching `rule`.
    ///
    /// The rule is in effect on the bus when this returns, so a caller can
    /// subscribe first and then read state without missing a change. The
    /// stream buffers up to `bufferSize` messages; a consumer that falls
    /// further behind gets a `LimitsExceeded` error and must subscribe again
    /// (and re-read state). Ending the iteration removes the rule.
    public func signals(matching rule: MatchRule, bufferSize: Int = 4096) async throws
        -> AsyncThrowingStream<Message, any Error>
    {
        let (stream, sink) = AsyncThrowingStream.makeStream(
            of: Message.self, bufferingPolicy: .bufferingOldest(max(1, bufferSize)))
        let subscription = try await subscribe(rule, delivery: .stream(sink, bufferSize: bufferSize)) { error in
            sink.finish(throwing: error)
        }
        sink.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Calls `handler` for every message matching `rule`, on the
    /// connection's own thread, in arrival order and before any message
    /// received later (a method reply included) is delivered. So state kept
    /// by the handler already reflects every signal that preceded a reply
    /// when the caller awaiting that reply resumes.
    ///
    /// The handler must be quick and must not wait for anything (it holds up
    /// all traffic on the connection); it has no buffer to overflow. `ended`
    /// runs once if the connection closes. Cancel the returned subscription
    /// to stop, which also removes the rule from the bus.
    public func addSignalHandler(
        matching rule: MatchRule, ended: @escaping @Sendable (DBusError) -> Void = { _ in },
        _ handler: @escaping @Sendable (Message) -> Void
    ) async throws -> SignalSubscription {
        try await subscribe(rule, delivery: .handler(handler, ended: ended)) { _ in }
    }

    /// Registers a delivery locally (so nothing is missed), then adds the rule
    /// on the bus and waits for the bus to confirm it. A rule naming a
    /// well-known sender first has that name's owner followed (so that the
    /// rule matches only its owner's messages, as the bus does): the three
    /// calls this takes go out together, in one round trip.
    private func subscribe(
        _ rule: MatchRule, delivery: SignalRouter.Delivery, onFailure: (any Error) -> Void
    ) async throws -> SignalSubscription {
        let id = router.add(rule, delivery: delivery)
        let subscription = SignalSubscription(connection: self, id: id, rule: rule)
        let addMatch = Self.busCall("AddMatch", [.string(rule.description)])
        do {
            if let sender = rule.sender, !sender.isUnique, let tracking = beginTrackingOwner(of: sender) {
                let replies = await callsInOrder(tracking + [addMatch])
                do {
                    try recordOwner(of: sender, followed: replies[0], lookedUp: replies[1])
                    _ = try replies[2].get()
                } catch {
                    if case .success = replies[2] {
                        try? send(Self.busCall("RemoveMatch", [.string(rule.description)], noReply: true))
                    }
                    throw error
                }
            } else {
                _ = try await call(addMatch)
            }
            subscription.matchAdded.store(true, ordering: .releasing)
        } catch {
            router.remove(id)
            onFailure(error)
            throw error
        }
        return subscription
    }

    /// The calls that start following the owner of a well-known name, or
    /// nil when there is nothing to call: the name is followed already, or
    /// it is the bus's own name, which the bus owns for good. A rule on the
    /// owner's `NameOwnerChanged` then `GetNameOwner`: the bus handles a
    /// connection's messages in order, so no change between the two is
    /// missed.
    private func beginTrackingOwner(of name: BusName) -> [Message]? {
        guard router.beginTracking(name) else { return nil }
        guard name != .bus else {
            router.recordLookup(name, owner: .unique(.bus))
            return nil
        }
        let rule = MatchRule(
            sender: .bus, interface: .bus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
            arguments: [0: name.rawValue])
        return [Self.busCall("AddMatch", [.string(rule.description)]), Self.busCall("GetNameOwner", [.string(name.rawValue)])]
    }

    /// Records what the calls of `beginTrackingOwner` answered.
    private func recordOwner(
        of name: BusName, followed: Result<Message, any Error>, lookedUp: Result<Message, any Error>
    ) throws {
        _ = try followed.get()
        do {
            if let owner = try lookedUp.get().body.first?.string {
                router.recordLookup(name, owner: .unique(BusName(unchecked: owner)))
            }
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            router.recordLookup(name, owner: .none)
        }
    }

    /// Sends method calls back to back and waits for all their replies: one
    /// round trip for several calls, each of which sees what those before it
    /// did (the bus handles a connection's messages in the order sent).
    /// Returns each call's outcome, in order, as `call(_:)` would have.
    func callsInOrder(_ messages: [Message], timeout: Duration = Connection.defaultTimeout) async
        -> [Result<Message, any Error>]
    {
        var slots = 0
        defer { for _ in 0..<slots { callSlots.release() } }
        do {
            for _ in messages {
                try await callSlots.acquire()
                slots += 1
            }
        } catch {
            return messages.map { _ in .failure(error) }
        }
        let calls = messages.map { message in
            precondition(message.kind == .methodCall, "callsInOrder(_:) sends method calls")
            return PendingCall(message: message, id: nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue)
        }
        let milliseconds = EventLoop.milliseconds(timeout)
        let start = ContinuousClock.now
        return await withTaskCancellationHandler {
            for call in calls {
                let queued = loop.enqueue(
                    .send(
                        call.message, reply: { call.reply.resolve($0) }, id: call.id,
                        timeoutMilliseconds: milliseconds, cancellation: call.cancellation))
                if !queued { call.reply.resolve(.failure(DBusError(.disconnected, "the connection to the bus is closed"))) }
            }
            var results: [Result<Message, any Error>] = []
            for call in calls {
                let result = await call.reply.wait(deadline: nil, timeout: CancellationError(), cancelled: CancellationError())
                let error: (any Error)? = if case .failure(let error) = result { error } else { nil }
                CallMetrics.record(call.message, since: start, error: error)
                results.append(result)
            }
            return results
        } onCancel: {
            for call in calls {
                call.cancellation.cancel()
                loop.enqueue(.cancel(id: call.id))
            }
        }
    }

    /// One call of `callsInOrder`.
    private struct PendingCall: Sendable {
        let message: Message
        let id: UInt64
        let cancellation = CallCancellation()
        let reply = Promise<Message, any Error>()
    }

    static func busCall(_ method: MemberName, _ arguments: [Value], noReply: Bool = false) -> Message {
        var message = Message.methodCall(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: method, body: arguments)
        message.noReplyExpected = noReply
        return message
    }

    // MARK: Names

    public struct RequestNameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    public func requestName(_ name: BusName, flags: RequestNameFlags = [.doNotQueue]) async throws
        -> RequestNameReply
    {
        let reply = try await call(Self.busCall("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)]))
        guard let code = reply.body.first?.uint32, let result = RequestNameReply(rawValue: code) else {
            throw DBusError(.failed, "unexpected RequestName reply \(reply.signature)")
        }
        return result
    }

    /// Gives a well-known name back to the bus.
    public func releaseName(_ name: BusName) async throws {
        _ = try await call(Self.busCall("ReleaseName", [.string(name.rawValue)]))
    }

    /// The unique name owning `name`, or nil if it has no owner.
    public func nameOwner(_ name: BusName) async throws -> BusName? {
        do {
            let reply = try await call(Self.busCall("GetNameOwner", [.string(name.rawValue)]))
            return reply.body.first?.string.flatMap(BusName.init(rawValue:))
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }
}
