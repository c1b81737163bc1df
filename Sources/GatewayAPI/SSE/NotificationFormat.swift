import HTTPServer

/// What a notification stream's `notification` events carry (`?format=`).
enum NotificationFormat: String, Sendable, Hashable {
    /// The value with its device, characteristic, handle, encoding and
    /// timestamp, as a JSON object (the default).
    case event
    /// The value alone, as a JSON string in the stream's encoding: for a
    /// reader that knows what it subscribed to and wants the least to
    /// decode for each value (the Python client's Bleak backend). Hex or
    /// base64 only: a value that is not UTF-8 would need its encoding named.
    case value

    /// Reads `?format=` with the stream's `encoding`.
    init(parameter: String?, encoding: ByteEncoding) throws(Problem) {
        guard let parameter else {
            self = .event
            return
        }
        guard let format = NotificationFormat(rawValue: parameter) else {
            throw Problem.invalidParameter("format", "must be event or value, not '\(parameter)'")
        }
        if format == .value, encoding == .utf8 {
            throw Problem.invalidParameter("format", "value takes hex or base64 values, not utf8")
        }
        self = format
    }
}
