import HTTPServer

extension EventLog {
    /// One published event, as the replay buffer keeps it.
    struct Entry: Sendable {
        /// An event's data: how to build it, until a stream takes the
        /// event; then its encoded frame. The buffer keeps one form, not
        /// both.
        enum Body: Sendable {
            case text(@Sendable () -> String)
            case json(@Sendable () -> JSON)
            /// The SSE frame (`id:`, `event:`, `data:` lines).
            case frame([UInt8])
        }

        let id: UInt64
        let type: String
        /// The device the event is about (canonical address), if any.
        let device: String?
        var body: Body

        /// The SSE frame, encoded now if no stream took the event before.
        mutating func encodedFrame() -> [UInt8] {
            let frame: [UInt8]
            switch body {
            case .frame(let encoded): return encoded
            case .json(let json): frame = Self.trimmed(json().eventFrame(id: id, event: type))
            case .text(let text): frame = ServerSentEvent(id: String(id), event: type, data: text()).encoded
            }
            body = .frame(frame)
            return frame
        }

        /// `frame` without the spare capacity that growing it while
        /// encoding left (up to as much again): the buffer keeps up to a
        /// million frames.
        private static func trimmed(_ frame: [UInt8]) -> [UInt8] {
            guard frame.capacity - frame.count > frame.count / 8 else { return frame }
            return [UInt8](unsafeUninitializedCapacity: frame.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: frame)
            }
        }
    }
}
