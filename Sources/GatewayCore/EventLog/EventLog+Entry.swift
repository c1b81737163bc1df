#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EventLog {
    /// One published event, as the replay buffer keeps it.
    struct Entry: Sendable {
        /// The typed event, until a subscriber asks for its bytes; then
        /// its encoded form. The buffer keeps one form, not both.
        enum Body: Sendable {
            case event(Event, time: Date)
            /// The log's encoding of the event (an SSE frame in GatewayAPI).
            case frame([UInt8])
        }

        let id: UInt64
        let type: String
        /// The device the event is about (canonical address), if any.
        let device: String?
        var body: Body

        /// The event as its live subscribers left it: encoded if one asked.
        init(_ published: PublishedEvent<Event>) {
            id = published.id
            type = published.type
            device = published.device
            body = published.frame.map(Body.frame) ?? .event(published.event, time: published.time)
        }

        /// The encoded form, made now by `encoding` if no subscriber asked
        /// before.
        mutating func encodedFrame(by encoding: any EventEncoding<Event>) -> [UInt8] {
            switch body {
            case .frame(let encoded): return encoded
            case .event(let event, let time):
                let frame = EventLog.trimmed(encoding.frame(of: event, id: id, time: time))
                body = .frame(frame)
                return frame
            }
        }
    }

    /// `frame` without the spare capacity that growing it while encoding
    /// left (up to as much again): the buffer keeps up to a million frames.
    static func trimmed(_ frame: [UInt8]) -> [UInt8] {
        guard frame.capacity - frame.count > frame.count / 8 else { return frame }
        return [UInt8](unsafeUninitializedCapacity: frame.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: frame)
        }
    }
}
