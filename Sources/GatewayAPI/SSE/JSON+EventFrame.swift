import HTTPServer

extension JSON {
    /// An SSE event whose data is this value, encoded straight into the
    /// frame's bytes (compact JSON is always one line).
    func eventFrame(id: UInt64?, event: String) -> [UInt8] {
        ServerSentEvent.frame(id: id, event: event) { write(to: &$0) }
    }
}
