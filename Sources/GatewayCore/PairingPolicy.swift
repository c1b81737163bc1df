/// What a GATT command does when the peripheral refuses it for want of
/// pairing (`?pair=auto` on the REST routes).
public enum PairingPolicy: String, Sendable, Hashable {
    /// The refusal is the command's answer (`not-paired`).
    case never
    /// The gateway pairs (the agent's capability decides the method: Just
    /// Works with the default NoInputNoOutput) and runs the command once
    /// more.
    case auto

    /// The policy a client named (`auto`; nil: `never`); a mistake names
    /// `parameter`.
    public init(parsing text: String?, parameter: String = "pair") throws(GatewayCommandError) {
        switch text {
        case nil: self = .never
        case "auto"?: self = .auto
        case let other?: throw .invalidParameter(name: parameter, reason: "'\(other)' is not a pairing mode (auto)")
        }
    }
}
