import Dispatch
import Foundation
import HTTPServer
import Synchronization
import Testing

/// Runs its jobs on the global queue and counts them: a job it is given is a
/// task that was started or resumed on it rather than on the caller's thread.
final class CountingExecutor: TaskExecutor {
    let enqueued = Atomic(0)

    func enqueue(_ job: consuming ExecutorJob) {
        enqueued.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
}

extension HTTPServerTests {
    /// Handlers of routes added with an executor start on the polling
    /// thread (`Responder.handlerExecutor(for:)`).
    @Suite struct ImmediateHandlers {
        @Test func startOnThePollingThreadAndAnswerInOrderOnOneConnection() async throws {
            let executor = CountingExecutor()
            let seenAtStart = Mutex<[Int]>([])
            var router = Router()
            // Answers before it ever suspends: delivered from inside the
            // access handler's call that started it.
            router.get("/now", executor: executor) { _ in .text("now") }
            router.get("/later/{n}", executor: executor) { request in
                seenAtStart.withLock { $0.append(executor.enqueued.load(ordering: .relaxed)) }
                try await Task.sleep(for: .milliseconds(5))
                return .text("later \(request.parameters["n"] ?? "-")")
            }
            try await withServer(router) { _, port in
                let answers = try await blocking {
                    let client = try RawClient(port: port)
                    var texts: [String] = []
                    for path in ["/now", "/later/1", "/now", "/later/2"] {
                        try client.request("GET", path)
                        texts.append(try client.readResponse().text)
                    }
                    // Pipelined: the second waits for the first's answer.
                    try client.send("GET /later/3 HTTP/1.1\r\nHost: x\r\n\r\nGET /now HTTP/1.1\r\nHost: x\r\n\r\n")
                    texts.append(try client.readResponse().text)
                    texts.append(try client.readResponse().text)
                    return texts
                }
                #expect(answers == ["now", "later 1", "now", "later 2", "later 3", "now"])
            }
            // Each handler began without the executor being asked to run
            // it: only the resumptions after the sleeps reached it.
            #expect(seenAtStart.withLock { $0 } == [0, 1, 2])
            #expect(executor.enqueued.load(ordering: .relaxed) == 3)
        }

        /// A suspended connection does not see its client leave: the
        /// handler runs to its end, and its response is dropped with the
        /// request, leaving no exchange and no connection behind.
        @Test func aHandlerWhoseClientLeftFinishesAndLeavesNothingBehind() async throws {
            let executor = CountingExecutor()
            let finished = Atomic(false)
            var router = Router()
            router.get("/wait", executor: executor) { _ in
                try await Task.sleep(for: .milliseconds(300))
                finished.store(true, ordering: .releasing)
                return .text("too late")
            }
            router.get("/health") { _ in .text("ok") }
            try await withServer(router) { server, port in
                try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("GET", "/wait")
                    Thread.sleep(forTimeInterval: 0.05)
                    client.close()
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while (server.activeRequestCount > 0 || server.openConnectionCount > 0) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                let handlerFinished = finished.load(ordering: .acquiring)
                #expect(handlerFinished)
                #expect(server.activeRequestCount == 0)
                #expect(server.openConnectionCount == 0)
                // The server goes on serving.
                let health = try await curl(["http://127.0.0.1:\(port)/health"])
                #expect(health.output == "ok")
            }
        }

        @Test func routesWithoutAnExecutorAndUnknownPathsNameNone() {
            var router = Router()
            router.get("/plain") { _ in .text("plain") }
            router.get("/fast/{id}", executor: CountingExecutor()) { _ in .text("fast") }
            #expect(router.handlerExecutor(for: Request(method: .get, target: "/plain")) == nil)
            #expect(router.handlerExecutor(for: Request(method: .get, target: "/fast/7")) != nil)
            #expect(router.handlerExecutor(for: Request(method: .head, target: "/fast/7")) != nil)
            #expect(router.handlerExecutor(for: Request(method: .post, target: "/fast/7")) == nil)
            #expect(router.handlerExecutor(for: Request(method: .get, target: "/nowhere")) == nil)
        }
    }
}
