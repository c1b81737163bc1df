import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

extension HTTPServerTests {
    /// A producer that writes with `StreamWriter.writePaced` waits for its
    /// client instead of overflowing the writer's buffer.
    @Suite struct PacedStreams {
        /// What a producer task saw, read by the test.
        final class Seen<Value: Sendable>: Sendable {
            let value: Mutex<Value>
            init(_ value: Value) { self.value = Mutex(value) }
        }

        @Test func aBurstManyTimesTheBufferLimitArrivesWholeAtTheClientsPace() async throws {
            // 2,000 events of about 1 KiB written at once: 2 MB through a
            // 32 KiB buffer, to a client with a small receive buffer.
            let configuration = StreamConfiguration(heartbeatInterval: nil, maxBufferedBytes: 32 * 1024)
            let largestQueue = Seen(0)
            let hub = StreamHub()
            var router = Router()
            router.get("/burst") { _ in
                let writer = StreamWriter(configuration: configuration) { end in hub.ends.withLock { $0.append(end) } }
                hub.writers.withLock { $0.append(writer) }
                Task {
                    let padding = String(repeating: "p", count: 1000)
                    for id in 1...2000 {
                        guard await writer.writePaced(ServerSentEvent(id: String(id), data: padding).encoded) else { return }
                        let queued = writer.bufferedByteCount
                        largestQueue.value.withLock { $0 = max($0, queued) }
                    }
                }
                return .eventStream(writer)
            }
            try await withServer(router) { _, port in
                let stream = try await blocking {
                    try EventStreamClient.open(port: port, target: "/burst", receiveBuffer: 8192)
                }
                let ids = try await blocking {
                    try (1...2000).map { id in
                        // The client starts slow: the producer meets a full queue.
                        if id < 20 { Thread.sleep(forTimeInterval: 0.01) }
                        return try stream.nextEvent()?.id
                    }
                }
                #expect(ids == (1...2000).map { String($0) }, "every event once, in order")
                let writer = hub.writer(0)
                #expect(writer.isOpen, "a client reading a paced burst is not too slow")
                #expect(largestQueue.value.withLock { $0 } <= writer.pacedLevel)
                stream.client.close()
                #expect(await eventually { hub.endCount == 1 })
                #expect(hub.allEnds == [.clientDisconnected])
            }
        }

        @Test func aPacedWriteWaitingForAClientThatLeavesReturnsFalse() async throws {
            let configuration = StreamConfiguration(heartbeatInterval: nil, maxBufferedBytes: 16 * 1024)
            let outcome = Seen<(written: Int, result: Bool?)>((0, nil))
            let hub = StreamHub()
            var router = Router()
            router.get("/stuck") { _ in
                let writer = StreamWriter(configuration: configuration) { end in hub.ends.withLock { $0.append(end) } }
                hub.writers.withLock { $0.append(writer) }
                Task {
                    let bytes = ServerSentEvent(data: String(repeating: "s", count: 4000)).encoded
                    while await writer.writePaced(bytes) { outcome.value.withLock { $0.written += 1 } }
                    outcome.value.withLock { $0.result = false }
                }
                return .eventStream(writer)
            }
            try await withServer(router) { _, port in
                // The client reads the head and then nothing: the producer
                // fills the client's socket and then waits for room.
                let client = try await blocking {
                    try EventStreamClient.open(port: port, target: "/stuck", receiveBuffer: 4096).client
                }
                #expect(await eventually { outcome.value.withLock { $0.written } > 0 })
                try await Task.sleep(for: .milliseconds(300))
                let writer = hub.writer(0)
                #expect(writer.isOpen, "waiting, not dropped")
                #expect(writer.bufferedByteCount <= writer.pacedLevel)
                #expect(outcome.value.withLock { $0.result } == nil)
                client.close()
                #expect(await eventually { outcome.value.withLock { $0.result } == false }, "the waiting write ends with the stream")
                // The end is reported on the server's thread as the
                // connection closes, which may come after the waiting write
                // has seen the stream close.
                #expect(await eventually { hub.allEnds == [.clientDisconnected] }, "\(hub.allEnds)")
            }
        }

        @Test func aPacedWriteEndsWhenItsTaskIsCancelled() async throws {
            // A writer never sent in a response: nobody reads it.
            let writer = StreamWriter(configuration: StreamConfiguration(heartbeatInterval: nil, maxBufferedBytes: 1024))
            #expect(await writer.writePaced(Array(repeating: 0x61, count: 600)))
            let waiting = Task { await writer.writePaced(Array(repeating: 0x62, count: 600)) }
            try await Task.sleep(for: .milliseconds(100))
            waiting.cancel()
            #expect(await waiting.value == false)
            #expect(writer.bufferedByteCount == 600)
        }
    }
}
