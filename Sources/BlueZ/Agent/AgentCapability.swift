/// The input/output capability an agent registers with (`RegisterAgent`'s
/// second argument, doc/org.bluez.AgentManager.rst). It decides which
/// pairing method bluetoothd and the peer choose: with `noInputNoOutput`
/// only Just Works is possible.
public enum AgentCapability: String, Sendable, Hashable, CaseIterable {
    case displayOnly = "DisplayOnly"
    case displayYesNo = "DisplayYesNo"
    case keyboardOnly = "KeyboardOnly"
    case noInputNoOutput = "NoInputNoOutput"
    case keyboardDisplay = "KeyboardDisplay"

    /// Parses the BlueZ spelling, in any case (`keyboarddisplay` too).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = match
    }
}
