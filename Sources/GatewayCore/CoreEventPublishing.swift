/// Where the core's events go: GatewayAPI's event log (its
/// `EventLogPublisher`). Called on the thread where the event happens,
/// which may be the one delivering the central's events: it must not wait.
public protocol CoreEventPublishing: Sendable {
    func publish(_ event: CoreEvent)
}
