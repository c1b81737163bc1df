import Synchronization

/// Bounds the memory held by request bodies in flight (from the head that
/// announces one until its request completes), in all and per client
/// address, so many concurrent uploads cannot take the server's memory.
/// A body that does not fit is refused with a 503 instead of being read.
final class BodyBudget: Sendable {
    private struct State {
        var held = 0
        var perAddress: [String: Int] = [:]
    }

    private let total: Int
    private let perClient: Int
    private let state = Mutex(State())

    /// Limits in bytes; zero for none.
    init(total: Int, perClient: Int) {
        self.total = total
        self.perClient = perClient
    }

    /// Takes `bytes` for `address`, or says why they do not fit.
    func reserve(_ bytes: Int, for address: String) -> String? {
        state.withLock { state in
            let ofClient = state.perAddress[address, default: 0] + bytes
            if perClient > 0 && ofClient > perClient {
                return "this client's request bodies in progress would exceed \(perClient) bytes"
            }
            if total > 0 && state.held + bytes > total {
                return "the request bodies in progress would exceed the server's \(total) bytes"
            }
            state.held += bytes
            state.perAddress[address] = ofClient
            return nil
        }
    }

    /// Gives back what `reserve` took.
    func release(_ bytes: Int, for address: String) {
        guard bytes > 0 else { return }
        state.withLock { state in
            state.held -= bytes
            let left = state.perAddress[address, default: bytes] - bytes
            state.perAddress[address] = left > 0 ? left : nil
        }
    }

    /// Bytes reserved now.
    var held: Int { state.withLock { $0.held } }
}
