#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPServer
import Logging

/// Gives every request an id: the client's `X-Request-ID` when it is sane
/// (1 to 128 characters of letters, digits and `-_.:@+=/`), else a new one
/// of 16 random hex digits. The id is echoed in the `X-Request-ID` response
/// header, carried by every problem (`request_id`), and attached to the
/// request's log lines (`request_id` metadata, through
/// `Logger.MetadataProvider.requestID`). Add it first, so that every other
/// middleware runs within it.
struct RequestIdentity: Middleware {
    static let header = "X-Request-ID"

    /// The id of the request the current task serves, if any.
    @TaskLocal static var current: String?

    func handle(_ request: Request, next: Next) async throws -> Response {
        let id = request.headers[Self.header].flatMap(Self.sanitized) ?? Self.generate()
        var response = try await Self.$current.withValue(id) { try await next(request) }
        response.headers.replaceOrAdd(name: Self.header, value: id)
        return response
    }

    /// The client's id if it is safe to echo and to log as it is.
    static func sanitized(_ candidate: String) -> String? {
        let trimmed = candidate.trimming(where: { $0.isWhitespace && !$0.isNewline })
        guard (1...128).contains(trimmed.utf8.count),
            trimmed.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "-_.:@+=/".utf8.contains(byte)
                }
            })
        else { return nil }
        return trimmed
    }

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension Logger.MetadataProvider {
    /// Adds `request_id` to every log line written while a request is served
    /// (bootstrap the logging system with it).
    public static let requestID = Logger.MetadataProvider {
        guard let id = RequestIdentity.current else { return [:] }
        return ["request_id": .string(id)]
    }
}
