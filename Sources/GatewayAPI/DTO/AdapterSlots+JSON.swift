import BlueZ

extension AdapterSlots {
    /// `connection_slots` as the API shows them: limit, used, free, queued;
    /// `named` puts the adapter's name first (in a list of adapters, as
    /// the fleet shows a gateway's and publishes its own).
    public func json(named: Bool = false) -> JSON {
        .object(
            (named ? [("adapter", JSON.string(adapter))] : []) + [
                ("limit", .int(limit)), ("used", .int(used)), ("free", .int(free)), ("queued", .int(queued)),
            ])
    }
}
