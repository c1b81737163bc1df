import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An open Server-Sent-Event stream from the gateway. Iterating it gives
/// the events; it ends when the gateway ends the stream, and throws when
/// the connection fails. Cancelling the iterating task, dropping the
/// iterator, or `close()` closes the connection (which ends the scan or
/// subscription it holds).
public final class EventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    private let events: AsyncThrowingStream<ServerSentEvent, any Error>
    private let reader: Reader

    private init(events: AsyncThrowingStream<ServerSentEvent, any Error>, reader: Reader) {
        self.events = events
        self.reader = reader
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator {
        events.makeAsyncIterator()
    }

    /// Closes the connection; iteration ends.
    public func close() { reader.close() }

    static func open(_ request: URLRequest, path: String, baseURL: URL) async throws(GatewayError) -> EventStream {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let reader = Reader(continuation: continuation, path: path, baseURL: baseURL)
        continuation.onTermination = { [reader] _ in reader.close() }
        let opened: Result<Void, GatewayError> = await withCheckedContinuation { opening in
            reader.start(request, opening: opening)
        }
        if case .failure(let error) = opened { throw error }
        return EventStream(events: events, reader: reader)
    }

    /// The URLSession data delegate of one stream. URLSession calls it on
    /// its own serial delegate queue; its state is behind a mutex because
    /// `close()` comes from any thread.
    final class Reader: NSObject, URLSessionDataDelegate, Sendable {
        private struct State {
            var parser = ServerSentEventParser()
            var opening: CheckedContinuation<Result<Void, GatewayError>, Never>?
            var status = 0
            var problemBody = Data()
            var session: URLSession?
            var closed = false
        }

        private let state = Mutex(State())
        private let continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
        private let path: String
        private let baseURL: URL

        init(continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation, path: String, baseURL: URL) {
            self.continuation = continuation
            self.path = path
            self.baseURL = baseURL
        }

        func start(_ request: URLRequest, opening: CheckedContinuation<Result<Void, GatewayError>, Never>) {
            let configuration = URLSessionConfiguration.ephemeral
            // The gateway sends a heartbeat comment every 15 s (by default)
            // on a quiet stream: a minute of silence is a lost gateway.
            configuration.timeoutIntervalForRequest = 60
            configuration.timeoutIntervalForResource = .infinity
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            state.withLock {
                $0.opening = opening
                $0.session = session
            }
            session.dataTask(with: request).resume()
        }

        func close() {
            let session = state.withLock { state -> URLSession? in
                guard !state.closed else { return nil }
                state.closed = true
                return state.session
            }
            session?.invalidateAndCancel()
            continuation.finish()
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let opening = state.withLock { state in
                state.status = status
                return (200..<300).contains(status) ? state.opening.take() : nil
            }
            opening?.resume(returning: .success(()))
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let events = state.withLock { state -> [ServerSentEvent] in
                guard (200..<300).contains(state.status) else {
                    state.problemBody.append(data)
                    return []
                }
                return state.parser.feed(data)
            }
            for event in events { continuation.yield(event) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let (opening, failure) = state.withLock { state -> (CheckedContinuation<Result<Void, GatewayError>, Never>?, GatewayError?) in
                let failure: GatewayError?
                if let error {
                    failure = state.closed ? nil : GatewayError(unreachable: baseURL, error)
                } else if !(200..<300).contains(state.status) {
                    failure = GatewayError(status: state.status, body: state.problemBody, path: path)
                } else {
                    failure = nil
                }
                return (state.opening.take(), failure)
            }
            if let opening {
                opening.resume(returning: .failure(failure ?? GatewayError(detail: "the gateway closed \(path) at once")))
            } else if let failure {
                continuation.finish(throwing: failure)
            } else {
                continuation.finish()
            }
            session.finishTasksAndInvalidate()
        }
    }
}
