import AsyncPrimitives
import DBus

/// The connection slots of every adapter, part of `CentralState` (so
/// decided under the central's lock, with the mirror it counts from).
///
/// An adapter's used slots are its connected devices, as the mirror shows
/// them (whoever connected them), and the connections being made through
/// it (`reserved`): a slot frees when a device disconnects, drops its link
/// or goes away, or when an attempt ends without a connection. Requests
/// that find no free slot wait in `queue`, in the order they came, and are
/// served in that order whenever the mirror or a reservation changes.
struct ConnectionSlots {
    /// A slot held by a connection attempt.
    struct Grant: Sendable {
        let id: UInt64
        let adapter: String
        let path: ObjectPath
    }

    /// A connection waiting for a slot: on `adapter`, or (nil) on the
    /// adapter that hears the device best among those with a free slot.
    struct Request {
        let id: UInt64
        let address: BluetoothAddress
        let adapter: String?
        let promise: Promise<Void, BlueZError>
    }

    /// Slots held by attempts in flight, by grant id.
    var reserved: [UInt64: Grant] = [:]
    /// Requests waiting, oldest first.
    var queue: [Request] = []
    /// Requests served from the queue whose caller has not picked up its
    /// grant yet (also in `reserved`).
    var granted: [UInt64: Grant] = [:]

    /// Slots in use on `adapter`: connected devices and attempts in flight,
    /// each device once.
    func used(_ adapter: String, in tree: ObjectTree) -> Int {
        var paths = Set<ObjectPath>()
        for device in tree.devices.values where device.connected && device.adapter == adapter { paths.insert(device.path) }
        for grant in reserved.values where grant.adapter == adapter { paths.insert(grant.path) }
        return paths.count
    }

    /// Requests waiting that could be served by `adapter`: those that name
    /// it, and those that name none for a device it lists.
    func queued(_ adapter: String, in tree: ObjectTree) -> Int {
        queue.count { request in
            if let named = request.adapter { return named == adapter }
            return tree.device(address: request.address, adapter: adapter) != nil
        }
    }

    /// Where a connection to `address` goes now, nil when it must wait:
    /// - the adapter it is connected through, or being connected through
    ///   (no second link to the same peer, no second slot);
    /// - else `named`, when it has a free slot;
    /// - else, with no adapter named, the powered adapter that hears the
    ///   device best (the RSSI of its Device1 object there; an object with
    ///   no RSSI, as after discovery stopped, ranks last, then by adapter
    ///   name) among those that list it and have a free slot.
    /// When no adapter that lists the device is powered, the first that
    /// lists it, so that the connection fails saying so.
    func choose(
        _ address: BluetoothAddress, adapter named: String?, in tree: ObjectTree, limits: SlotLimits
    ) -> (adapter: String, path: ObjectPath)? {
        let objects = tree.devices.values.filter { $0.address == address && (named == nil || $0.adapter == named) }
        if let connected = objects.filter(\.connected).min(by: { $0.adapter < $1.adapter }) {
            return (connected.adapter, connected.path)
        }
        let paths = Set(objects.map(\.path))
        if let inFlight = reserved.values.filter({ paths.contains($0.path) }).min(by: { $0.id < $1.id }) {
            return (inFlight.adapter, inFlight.path)
        }
        let powered = objects.filter { device in
            device.path.parent.flatMap { tree.adapters[$0] }?.powered == true
        }
        if powered.isEmpty, named == nil, let first = objects.min(by: { $0.adapter < $1.adapter }) {
            return (first.adapter, first.path)
        }
        let ranked = (named == nil ? powered : objects).sorted { lhs, rhs in
            let (left, right) = (lhs.advertisement.signalStrength ?? .min, rhs.advertisement.signalStrength ?? .min)
            return left != right ? left > right : lhs.adapter < rhs.adapter
        }
        guard let best = ranked.first(where: { used($0.adapter, in: tree) < limits.limit(of: $0.adapter) }) else {
            return nil
        }
        return (best.adapter, best.path)
    }

    /// Serves waiting requests in order, each as far as slots allow, and
    /// returns the promises of those served, for the caller to resolve
    /// after releasing the lock (`Delivery.outcome`).
    mutating func serve(in tree: ObjectTree, limits: SlotLimits) -> [Promise<Void, BlueZError>] {
        guard !queue.isEmpty else { return [] }
        var served: [Promise<Void, BlueZError>] = []
        var waiting: [Request] = []
        for request in queue {
            guard let (adapter, path) = choose(request.address, adapter: request.adapter, in: tree, limits: limits)
            else {
                waiting.append(request)
                continue
            }
            let grant = Grant(id: request.id, adapter: adapter, path: path)
            reserved[request.id] = grant
            granted[request.id] = grant
            served.append(request.promise)
        }
        queue = waiting
        return served
    }
}
