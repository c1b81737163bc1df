/// What watches every event of the core besides its event log (GatewayAPI
/// counts them for `GET /metrics`, every attempt of keeping a device
/// included). Called on the thread where the event happens, which may be
/// the one delivering the central's events: it must not wait.
public protocol CoreEventPublishing: Sendable {
    func publish(_ event: CoreEvent)
}
