import BlueZ

/// A client's answer to a question of the pairing agent: a passkey, a PIN,
/// yes (`.accept`) or no (`.reject`).
public struct AnswerPairingRequestCommand: Sendable, Hashable {
    /// The question's id (`pr-1`, ...), as its `pairing-request` event gives it.
    public let id: String
    public let answer: PairingAnswer

    public init(id: String, answer: PairingAnswer) {
        self.id = id
        self.answer = answer
    }
}
