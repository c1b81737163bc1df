import AsyncPrimitives
import Metrics

/// What every method call costs and how it ended, recorded through
/// swift-metrics (a no-op until the program bootstraps a backend):
///
/// - `blegateway_dbus_call_duration_seconds{method}`: a histogram of the time from
///   sending a call to its reply (its count is the number of calls);
/// - `blegateway_dbus_call_errors_total{method, error}`: calls answered with an error
///   (`error` is the D-Bus error name), timed out or disconnected.
///
/// `method` is `interface.member` (`org.bluez.Device1.Connect`), a set as
/// small as the methods the program calls; a call cancelled by its caller
/// is timed but not counted as an error.
enum CallMetrics {
    static let durationLabel = "blegateway_dbus_call_duration_seconds"
    static let errorsLabel = "blegateway_dbus_call_errors_total"

    static func method(of message: Message) -> String {
        let member = message.member?.rawValue ?? "unknown"
        guard let interface = message.interface?.rawValue else { return member }
        return "\(interface).\(member)"
    }

    static func record(_ message: Message, since start: ContinuousClock.Instant, error: (any Error)?) {
        let method = method(of: message)
        let elapsed = ContinuousClock.now - start
        Timer(label: durationLabel, dimensions: [("method", method)]).recordNanoseconds(Int64(elapsed.nanoseconds))
        guard let error, !(error is CancellationError) else { return }
        let name = (error as? DBusError)?.name.rawValue ?? "unknown"
        Counter(label: errorsLabel, dimensions: [("method", method), ("error", name)]).increment()
    }
}
