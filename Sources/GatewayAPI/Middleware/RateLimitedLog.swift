import Logging
import Synchronization

/// Log lines of one kind, at most `budget` per `interval`: a flood of
/// failures (a burst of commands for absent devices) costs a few lines and
/// a count, not a line each. The count of lines left out is logged with the
/// first line of the next interval.
public final class RateLimitedLog: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    private let logger: Logger
    private let level: Logger.Level
    private let budget: Int
    private let interval: Duration
    private let window: Mutex<Window>

    public init(logger: Logger, level: Logger.Level, budget: Int = 10, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.level = level
        self.budget = max(1, budget)
        self.interval = interval
        window = Mutex(Window(start: .now))
    }

    /// Logs `message` unless this interval's budget is spent.
    public func note(_ message: @autoclosure () -> String) {
        let now = ContinuousClock.now
        let (write, leftOut) = window.withLock { window -> (Bool, Int) in
            var leftOut = 0
            if now - window.start >= interval {
                leftOut = window.suppressed
                window = Window(start: now)
            }
            guard window.written < budget else {
                window.suppressed += 1
                return (false, 0)
            }
            window.written += 1
            return (true, leftOut)
        }
        guard write else { return }
        if leftOut > 0 {
            logger.log(level: level, "\(leftOut) similar lines were left out in the last \(interval)")
        }
        logger.log(level: level, "\(message())")
    }
}
