/// Where the core sends each of its events: every one to the observer (if
/// any), and those worth a line to the event log: pairing events, and the
/// keeper's steps it announces.
struct CoreEventOutlet: Sendable {
    let log: EventLog<LoggedEvent>?
    let observer: (any CoreEventPublishing)?

    func publish(_ event: CoreEvent) {
        observer?.publish(event)
        guard let log else { return }
        switch event {
        case .pairing(let pairing): log.publish(.pairing(pairing))
        case .keeping(let step, let announced): if announced { log.publish(.keeping(step)) }
        }
    }
}
