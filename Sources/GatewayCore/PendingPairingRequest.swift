import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A question of the pairing agent, as the core publishes and lists it:
/// the id a client answers it by, and when it is rejected unanswered
/// (display-only questions need no answer and are never listed).
public struct PendingPairingRequest: Sendable, Hashable {
    public let id: String
    public let request: PairingRequest
    public let expires: Date
}
