import Foundation
import HTTPServer
import Testing
import TestSupport

extension HTTPServerTests {
    @Suite struct SlowClients {
        @Test func slowClientIsDroppedWhileAFastOneKeepsReceiving() async throws {
            let hub = StreamHub()
            let configuration = StreamConfiguration(
                heartbeatInterval: nil, maxBufferedBytes: 1024 * 1024, dropGracePeriod: .milliseconds(500))
            var router = Router()
            router.get("/events", use: hub.handler(configuration))
            try await withServer(router) { _, port in
                // The slow client reads the response head, then nothing more;
                // its tiny receive buffer makes the server's writes stall soon.
                let slow = try await blocking {
                    let client = try RawClient(port: port, receiveBuffer: 4096)
                    try client.request("GET", "/events")
                    return (client, try client.readHead())
                }
                #expect(slow.1.status == 200)
                #expect(await eventually { hub.count == 1 })
                let fast = try await blocking { try EventStreamClient.open(port: port, target: "/events") }
                #expect(await eventually { hub.count == 2 })
                let slowWriter = hub.writer(0), fastWriter = hub.writer(1)

                // The fast client reads on its own thread until the stream ends.
                let received = Task {
                    try await blocking {
                        var ids: [Int] = []
                        while let event = try fast.nextEvent() { ids.append(Int(event.id ?? "") ?? -1) }
                        return ids
                    }
                }
                // 4 KiB events every 2 ms (about 2 MB/s) to both, the same
                // bytes for both, until the slow one is dropped (bounded).
                let padding = String(repeating: "p", count: 4000)
                var sent = 0
                let deadline = ContinuousClock.now + .seconds(30)
                while slowWriter.isOpen && ContinuousClock.now < deadline {
                    sent += 1
                    let bytes = ServerSentEvent(id: "\(sent)", data: padding).encoded
                    slowWriter.write(bytes)
                    #expect(fastWriter.write(bytes))
                    try await Task.sleep(for: .milliseconds(2))
                }
                #expect(!slowWriter.isOpen, "the slow client was never dropped")
                // The fast client keeps receiving after the drop.
                for _ in 0..<50 {
                    sent += 1
                    #expect(fastWriter.write(ServerSentEvent(id: "\(sent)", data: padding)))
                    try await Task.sleep(for: .milliseconds(2))
                }
                fastWriter.finish()
                let ids = try await received.value
                #expect(ids == Array(1...sent))
                #expect(await eventually { hub.endCount == 2 })
                #expect(Set(hub.allEnds) == [.tooSlow, .finished])
                slow.0.close()
                print("slow client dropped after \(sent - 50) events of 4 KiB; fast client got all \(ids.count)")
            }
        }
    }
}
