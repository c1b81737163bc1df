import GatewayAPI
import MQTT

/// A notification stream this gateway serves over HTTP while another
/// gateway of the fleet holds the subscription under a lease.
struct ServedStream: Sendable {
    /// The gateway that answered the leased `subscribe`.
    let holder: String
    /// The device, in its canonical form.
    let address: String
    /// The payload of the `unsubscribe` that gives the lease back.
    let unsubscribe: [UInt8]
    /// This gateway's subscription to the holder's value topic.
    let values: Subscription
    let receive: @Sendable (FleetStreamEvent) -> Void
    /// Whether this gateway has seen the holder's `connection` topic say
    /// connected since the stream opened: only a change from connected to
    /// disconnected ends the stream (the topic may arrive after the answer).
    var connectedSeen = false
}
