import BlueZ

/// Answer a central's read or write of a delegated characteristic (a
/// `request` peripheral event): with a value or an ATT error.
public struct AnswerCentralRequestCommand: Sendable, Hashable {
    /// The request's id, from its event.
    public let id: String
    public let answer: RequestAnswer

    public init(id: String, answer: RequestAnswer) {
        self.id = id
        self.answer = answer
    }
}
