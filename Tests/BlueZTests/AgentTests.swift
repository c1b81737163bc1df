import Testing

@testable import BlueZ

/// The agent's vocabulary: capabilities as bluetoothd spells them, request
/// kinds as clients see them.
@Suite struct AgentTests {
    @Test func capabilitiesParseInAnyCase() {
        #expect(AgentCapability(name: "KeyboardDisplay") == .keyboardDisplay)
        #expect(AgentCapability(name: "noinputnooutput") == .noInputNoOutput)
        #expect(AgentCapability(name: "DISPLAYYESNO") == .displayYesNo)
        #expect(AgentCapability(name: "Keyboard") == nil)
        #expect(AgentCapability(name: "") == nil)
        #expect(AgentCapability.allCases.map(\.rawValue).sorted() == [
            "DisplayOnly", "DisplayYesNo", "KeyboardDisplay", "KeyboardOnly", "NoInputNoOutput",
        ])
    }

    @Test func displayRequestsAwaitNoAnswer() {
        #expect(PairingRequest.Kind.displayPasskey(1, entered: 0).isDisplayOnly)
        #expect(PairingRequest.Kind.displayPinCode("0000").isDisplayOnly)
        for kind in [PairingRequest.Kind.pinCode, .passkey, .confirmation(1), .authorization, .serviceAuthorization("x")] {
            #expect(!kind.isDisplayOnly)
        }
    }

    @Test func refusalsAreBluezErrors() {
        #expect(PairingAgent.refusal(.reject).name.rawValue == "org.bluez.Error.Rejected")
        #expect(PairingAgent.refusal(.cancel).name.rawValue == "org.bluez.Error.Canceled")
        #expect(PairingAgent.refusal(nil).name.rawValue == "org.bluez.Error.Canceled")
        // An answer of the wrong kind (a passkey for a PIN) is a refusal.
        #expect(PairingAgent.refusal(.passkey(1)).name.rawValue == "org.bluez.Error.Rejected")
    }
}
