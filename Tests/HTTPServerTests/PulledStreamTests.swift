import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// A backlog pulled by its writer (`StreamWriter.pull`) reaches the
    /// client whole, however much larger than the writer's buffer limit.
    @Suite struct PulledStreams {
        /// Numbered events from 1 to `count`, handed out a batch at a time;
        /// records how refills overlapped and the largest queue they met.
        final class Backlog: Sendable {
            struct State {
                var next = 1
                var running = 0
                var overlapped = false
                var refills = 0
                var largestQueueSeen = 0
            }

            let count: Int
            let padding: String
            let state = Mutex(State())

            init(count: Int, eventSize: Int) {
                self.count = count
                self.padding = String(repeating: "p", count: eventSize)
            }

            func refill(_ writer: StreamWriter, budget: Int) -> Bool {
                state.withLock { state in
                    state.running += 1
                    state.overlapped = state.overlapped || state.running > 1
                    state.refills += 1
                    state.largestQueueSeen = max(state.largestQueueSeen, writer.bufferedByteCount)
                }
                defer { state.withLock { $0.running -= 1 } }
                var written = 0
                while written < budget {
                    let id = state.withLock { state -> Int? in
                        guard state.next <= count else { return nil }
                        defer { state.next += 1 }
                        return state.next
                    }
                    guard let id else { return false }
                    let bytes = ServerSentEvent(id: String(id), event: "past", data: padding).encoded
                    guard writer.write(bytes) else { return false }
                    written += bytes.count
                }
                return state.withLock { $0.next <= count }
            }
        }

        @Test func aBacklogManyTimesTheBufferLimitArrivesWholeThenLiveEventsFollow() async throws {
            // 2,000 events of about 1 KiB: 2 MB through a 32 KiB buffer.
            let backlog = Backlog(count: 2000, eventSize: 1000)
            let configuration = StreamConfiguration(heartbeatInterval: nil, maxBufferedBytes: 32 * 1024)
            let hub = StreamHub()
            var router = Router()
            router.get("/backlog") { _ in
                let writer = StreamWriter(configuration: configuration) { end in hub.ends.withLock { $0.append(end) } }
                hub.writers.withLock { $0.append(writer) }
                writer.pull(backlog.refill)
                return .eventStream(writer)
            }
            try await withServer(router) { _, port in
                // A small receive buffer: the server meets a full socket often.
                let stream = try await blocking {
                    try EventStreamClient.open(port: port, target: "/backlog", receiveBuffer: 8192)
                }
                let past = try await blocking { try (1...2000).map { _ in try stream.nextEvent()?.id } }
                #expect(past.count == 2000)
                let inOrder = past == (1...2000).map { String($0) }
                #expect(inOrder, "every event once, in order")
                let writer = hub.writer(0)
                #expect(writer.isOpen, "a client reading its backlog is not too slow")
                #expect(writer.write(ServerSentEvent(id: "2001", event: "live", data: "now")))
                let live = try await blocking { try stream.nextEvent() }
                #expect(live?.id == "2001" && live?.event == "live")
                let seen = backlog.state.withLock { $0 }
                #expect(!seen.overlapped, "never two refills at once")
                #expect(seen.refills > 10, "pulled in batches, not all at once")
                #expect(seen.largestQueueSeen < writer.refillBudget, "a refill starts only once the queue is low")
                stream.client.close()
                #expect(await eventually { hub.endCount == 1 })
                #expect(hub.allEnds == [.clientDisconnected])
            }
        }

        @Test func aStreamThatEndsStopsPulling() async throws {
            // A source that never runs dry and ignores refused writes: only
            // the writer can stop the refills.
            let refills = Mutex(0)
            let configuration = StreamConfiguration(heartbeatInterval: nil, maxBufferedBytes: 16 * 1024)
            let hub = StreamHub()
            var router = Router()
            router.get("/endless") { _ in
                let writer = StreamWriter(configuration: configuration) { end in hub.ends.withLock { $0.append(end) } }
                hub.writers.withLock { $0.append(writer) }
                writer.pull { writer, budget in
                    let id = refills.withLock { count in
                        count += 1
                        return count
                    }
                    writer.write(ServerSentEvent(id: String(id), data: String(repeating: "e", count: budget / 2)))
                    return true
                }
                return .eventStream(writer)
            }
            try await withServer(router) { _, port in
                let stream = try await blocking { try EventStreamClient.open(port: port, target: "/endless") }
                let first = try await blocking { try (1...50).map { _ in try stream.nextEvent()?.id } }
                #expect(first == (1...50).map { String($0) })
                stream.client.close()
                #expect(await eventually { hub.endCount == 1 })
                let atEnd = refills.withLock { $0 }
                try await Task.sleep(for: .milliseconds(200))
                // At most one refill that had already started when the stream ended.
                #expect(refills.withLock { $0 } <= atEnd + 1)
            }
        }
    }
}
