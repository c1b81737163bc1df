@testable import HTTPServer

extension StreamWriter {
    /// Everything queued for the client and not yet sent, as text.
    func queuedText() -> String {
        state.withLock { state in String(decoding: state.chunks.joined(), as: UTF8.self) }
    }
}

extension ResponseBody {
    var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }
}
