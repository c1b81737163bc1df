/// Text that is not JSON. `reason` is the decoder's account, for logs:
/// a door tells its client only that the text is not JSON.
public struct JSONParseError: Error, Sendable {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }
}
