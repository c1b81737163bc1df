import GatewayCore
import HTTPServer

/// An SSE stream as a subscriber of an event log: it writes each event's
/// frame (made once for every stream) to its `StreamWriter`, and catches
/// up on past events at the pace its client reads (`StreamWriter.pull`).
struct EventStreamSubscriber<Event: LoggableEvent>: ReplayingSubscriber {
    let writer: StreamWriter

    func receive(_ event: inout PublishedEvent<Event>) {
        writer.write(event.encoded())
    }

    func replay(_ frame: [UInt8]) -> Bool { writer.write(frame) }

    var replayBudget: Int { writer.refillBudget }

    func pull(_ next: @escaping @Sendable (_ budget: Int) async -> Bool) {
        writer.pull { _, budget in await next(budget) }
    }
}

extension EventLog {
    /// Starts writing the events `filter` takes to the SSE stream
    /// `writer`; with `lastEventID`, it first catches up on those after it.
    public func subscribe(_ writer: StreamWriter, id token: UInt64, filter: EventFilter, after lastEventID: UInt64? = nil) {
        subscribe(EventStreamSubscriber<Event>(writer: writer), id: token, filter: filter, after: lastEventID)
    }
}
