import Dispatch
import Glibc

/// SIGINT and SIGTERM as an awaitable event.
enum ShutdownSignal {
    /// Waits for the next SIGINT or SIGTERM and returns it. The signals'
    /// default action (exit at once) is switched off, so the gateway can
    /// stop what it started first.
    static func next() async -> Int32 {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        var iterator = signals.makeAsyncIterator()
        let number = await iterator.next() ?? SIGTERM
        withExtendedLifetime(sources) {}
        return number
    }
}
