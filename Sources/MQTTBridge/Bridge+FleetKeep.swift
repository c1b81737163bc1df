#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import GatewayAPI
import GatewayCore
import MQTT

// Devices kept by the fleet (docs/fleet.md, "Kept by the fleet"): the wish
// retained on `<prefix>/any/keep/<address>`, the holder decided by
// `FleetOwnership` over `<prefix>/any/owner/<address>`, and this gateway's
// part: take a free device when it is the best placed, hold it (keeper and
// standing subscriptions), hand it over or give it up, and let go of
// everything when the broker stops answering its heartbeats.
extension Bridge {
    // MARK: Timing (docs/fleet.md gives the reasoning)

    /// The broker's keep-alive: the Will is published 1.5 × this after the
    /// gateway last spoke.
    var keepAlive: Duration { .seconds(max(1, client.configuration.keepAlive)) }
    /// How often this gateway checks that the broker hears it.
    var heartbeatInterval: Duration { max(.milliseconds(500), keepAlive / 4) }
    /// A holder whose latest heartbeat came back longer ago than this lets
    /// go of every held device: by then others may soon count it offline.
    var releaseGrace: Duration { keepAlive }
    /// How long after a holder's Will others wait before taking its
    /// devices: the holder let go of them, cut off or not, by then. The
    /// Will can be published at once (the broker saw the connection close
    /// while the holder did not), so this must exceed `releaseGrace` plus
    /// a tick and a disconnect: 2 × keep-alive leaves one keep-alive for
    /// those.
    var takeoverWait: Duration { keepAlive * 2 }
    /// A gateway that just followed the fleet's topics takes nothing for
    /// this long: the retained wishes and holds arrive first.
    static let fleetKeepSettling = Duration.seconds(2)
    /// How long a gateway waits per place in the order of candidates
    /// before it takes a free device: four claim steps (2 s), so that a
    /// loaded gateway's late tick does not hand the device to the next one
    /// (a roam is not a request someone waits on).
    static func takeStep(_ claimStep: Duration) -> Duration { claimStep * 4 }
    /// A take that was not accepted is sent again after this long.
    static let takeRetry = Duration.seconds(5)

    // MARK: Following

    func followFleetKeeps() async throws {
        fleetKeeps.withLock { $0.followedAt = .now }
        _ = try await client.subscribe(topics.heartbeat, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let text = String(validating: message.payload, as: UTF8.self), let nanoseconds = Int64(text)
            else { return }
            let sent = self.clockBase + .nanoseconds(nanoseconds)
            self.fleetKeeps.withLock { keeping in
                if keeping.lastEcho.map({ $0 < sent }) ?? true { keeping.lastEcho = sent }
            }
        }
        _ = try await client.subscribe(topics.fleetKeeps, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            guard let self, let device = Self.level(3, of: message.topic).map(Self.canonicalAddress) else { return }
            let wish = message.payload.isEmpty ? nil : FleetKeep(published: Self.object(message.payload))
            self.fleetKeeps.withLock { keeping in
                keeping.wishes[device] = wish
                if wish != nil, keeping.freeSince[device] == nil { keeping.freeSince[device] = .now }
            }
        }
        _ = try await client.subscribe(topics.fleetOwners, qos: .atLeastOnce, waitForAcknowledgement: false) {
            [weak self] message in
            self?.receiveOwnerMessage(message)
        }
    }

    /// One take, hold or release, in the broker's order (the MQTT thread).
    private func receiveOwnerMessage(_ message: Message) {
        guard let device = Self.level(3, of: message.topic).map(Self.canonicalAddress), !message.payload.isEmpty else {
            return
        }
        let object = Self.object(message.payload)
        guard let gateway = (try? object["gateway"].string()) ?? nil,
            let epoch = (try? object["epoch"].int(in: 0...Int.max)) ?? nil,
            let action = ((try? object["action"].string()) ?? nil).flatMap(FleetOwnership.Action.init)
        else { return }
        let failed = ((try? object["failed"].bool()) ?? nil) == true
        let online = fleet.withLock { $0.online }
        let me = configuration.gatewayID
        let now = ContinuousClock.now
        let penalty = configuration.roamPenalty
        let (changed, mustDrop, wish) = fleetKeeps.withLock { keeping -> (FleetOwnership.Record?, Bool, FleetKeep?) in
            let changed = keeping.ownership.apply(
                action, by: gateway, epoch: epoch, failed: failed, device: device, isOnline: { online.contains($0) })
            guard let changed else { return (nil, false, nil) }
            if changed.owner != me { keeping.releasing[device] = nil }
            if changed.owner == nil {
                keeping.freeSince[device] = now
                if failed { keeping.penalties[device, default: [:]][gateway] = now + penalty }
            }
            // Held here, but the fleet says another holds it (this gateway
            // missed messages while cut off): let go at once.
            let mustDrop = keeping.holding[device] != nil && changed.owner != me
            if mustDrop { keeping.holding[device] = nil }
            return (changed, mustDrop, keeping.wishes[device])
        }
        guard let changed else { return }
        if mustDrop { Task { await releaseLocally(device) } }
        announceOwnerChange(device, changed, action: action, by: gateway)
        guard changed.owner == me, action == .take, let wish else { return }
        startHolding(wish, epoch: changed.epoch)
    }

    private func releaseLocally(_ device: String) async {
        await releaseHold(device, timeout: keepAlive / 2)
    }

    /// Lets go of `device` (its canonical address, as the fleet's topics
    /// name it) through the core: disconnected before this returns.
    private func releaseHold(_ device: String, timeout: Duration) async {
        guard let address = BluetoothAddress(device) else { return }
        await gateway.core.releaseFleetHold(ReleaseFleetHoldCommand(device: address, timeout: timeout))
    }

    private func startHolding(_ wish: FleetKeep, epoch: Int) {
        fleetKeeps.withLock { $0.holding[wish.address] = FleetKeeping.Holding(epoch: epoch) }
        let held: Bool
        do {
            try gateway.core.holdForFleet(HoldForFleetCommand(wish: wish))
            held = true
        } catch {
            held = false
        }
        guard held else {
            // No adapter to hold it on: give it straight back, as failed.
            fleetKeeps.withLock { $0.holding[wish.address] = nil }
            publishOwner(wish.address, .release, epoch: epoch, failed: true)
            return
        }
        publishOwner(wish.address, .hold, epoch: epoch)
    }

    /// The fleet's events stream shows every change of holder.
    private func announceOwnerChange(
        _ device: String, _ record: FleetOwnership.Record, action: FleetOwnership.Action, by gateway: String
    ) {
        let json = JSON.object([
            ("type", .string("fleet-owner")), ("timestamp", .string(Date().ISO8601Format())),
            ("address", .string(device)), ("owner", record.owner.map(JSON.string) ?? .null),
            ("epoch", .int(record.epoch)), ("action", .string(action.rawValue)),
        ])
        handOver(Message(topic: topics.fleetOwner(device), payload: json.bytes), from: gateway)
    }

    func noteFleetStatus(_ gateway: String, online: Bool) {
        fleetKeeps.withLock { keeping in
            if online { keeping.offlineSince[gateway] = nil } else if keeping.offlineSince[gateway] == nil {
                keeping.offlineSince[gateway] = .now
            }
        }
    }

    /// A held device's link came up: seen from the event, not only from
    /// the 250 ms tick, which can miss a link that drops sooner (and would
    /// then never count the device lost).
    func noteConnectedLocally(_ device: String) {
        guard configuration.fleet else { return }
        fleetKeeps.withLock { keeping in
            if keeping.holding[device] != nil { keeping.holding[device]?.wasUp = true }
        }
    }

    func noteHeardLocally(_ device: String) {
        guard configuration.fleet else { return }
        fleetKeeps.withLock { keeping in
            if keeping.wishes[device] != nil { keeping.heardLocally[device] = .now }
        }
    }

    // MARK: Publishing

    private func publishOwner(_ device: String, _ action: FleetOwnership.Action, epoch: Int, failed: Bool = false) {
        var members: [(String, JSON)] = [
            ("gateway", .string(configuration.gatewayID)), ("epoch", .int(epoch)), ("action", .string(action.rawValue)),
        ]
        if failed { members.append(("failed", .bool(true))) }
        // Takes are not retained: one that loses must not be what a
        // gateway starting later reads as the holder.
        _ = try? client.publish(
            topics.fleetOwner(device), payload: JSON.object(members).bytes, qos: .atLeastOnce, retain: action != .take,
            properties: Self.json)
    }

    /// After each (re)connection: the devices held here, again, for the
    /// gateways that missed the take.
    func announceHolds() {
        guard configuration.fleet else { return }
        let me = configuration.gatewayID
        let held = fleetKeeps.withLock { keeping in
            keeping.holding.filter { keeping.ownership.record($0.key).owner == me }.map { ($0.key, $0.value.epoch) }
        }
        for (device, epoch) in held { publishOwner(device, .hold, epoch: epoch) }
    }

    // MARK: FleetAccess

    public func keepByFleet(_ keep: FleetKeep) async throws(FleetError) {
        guard configuration.fleet else { throw .unavailable("this gateway's MQTT bridge runs without the fleet") }
        guard client.connectionState.isConnected else { throw .unavailable("this gateway is not connected to the MQTT broker") }
        do {
            try client.publish(
                topics.fleetKeep(keep.address), payload: keep.json.bytes, qos: .atLeastOnce, retain: true,
                properties: Self.json)
        } catch {
            throw .unavailable("the keep could not be published: \(error)")
        }
        guard await client.waitUntilDelivered(timeout: .seconds(10)) else { throw .timeout }
    }

    public func unkeepByFleet(_ address: String) async throws(FleetError) -> Bool {
        guard configuration.fleet else { throw .unavailable("this gateway's MQTT bridge runs without the fleet") }
        guard fleetKeeps.withLock({ $0.wishes[address] != nil }) else { return false }
        guard client.connectionState.isConnected else { throw .unavailable("this gateway is not connected to the MQTT broker") }
        do {
            try client.publish(topics.fleetKeep(address), payload: [], qos: .atLeastOnce, retain: true)
        } catch {
            throw .unavailable("the release could not be published: \(error)")
        }
        guard await client.waitUntilDelivered(timeout: .seconds(10)) else { throw .timeout }
        return true
    }

    /// The fleet's wish and holder of a device, for `/v1/fleet/devices`.
    func fleetKeepState(_ device: String) -> (wish: FleetKeep?, record: FleetOwnership.Record) {
        fleetKeeps.withLock { ($0.wishes[device], $0.ownership.record(device)) }
    }

    func fleetKeptAddresses() -> Set<String> {
        fleetKeeps.withLock { Set($0.wishes.keys) }
    }

    // MARK: Tending (every tick)

    /// Sends the heartbeat when due; lets go of what must go; takes what is
    /// free and best placed here.
    func tendFleetKeeps(now: ContinuousClock.Instant) {
        guard configuration.fleet else { return }
        let connected = client.connectionState.isConnected
        let beat = fleetKeeps.withLock { keeping -> Bool in
            guard connected, keeping.lastBeat.map({ now - $0 >= heartbeatInterval }) ?? true else { return false }
            keeping.lastBeat = now
            return true
        }
        if beat {
            let nanoseconds = (now - clockBase).nanosecondsTotal
            _ = try? client.publish(topics.heartbeat, payload: Array(String(nanoseconds).utf8), qos: .atLeastOnce)
        }
        let me = configuration.gatewayID
        let online = fleet.withLock { $0.online }
        let snapshot = fleetKeeps.withLock { $0 }
        let echoFresh = snapshot.lastEcho.map { now - $0 < releaseGrace } ?? false

        // What this gateway holds.
        for (device, holding) in snapshot.holding where snapshot.releasing[device] == nil {
            let record = snapshot.ownership.record(device)
            guard echoFresh else {
                // Cut off from the broker (or it stopped answering): others
                // will soon count this gateway offline and take its devices.
                release(device, epoch: holding.epoch, failed: false, publish: true)
                continue
            }
            guard let wish = snapshot.wishes[device], record.owner == me else {
                release(device, epoch: holding.epoch, failed: false, publish: record.owner == me)
                continue
            }
            let choice = ownerChoice(wish, snapshot: snapshot, online: online, now: now)
            let address = BluetoothAddress(device)
            let status = address.flatMap(gateway.core.fleetHoldStatus)
            let link = address.flatMap(gateway.core.fleetHoldLink)
            let isUp = link?.isUp == true
            let wasUp = holding.wasUp || isUp
            // Down counts from the link's loss, or from its adapter going
            // off (even before a first link: nothing will come of it).
            let adapterOff = link?.adapterOn == false
            let downSince = isUp || !(wasUp || adapterOff) ? nil : holding.downSince ?? now
            fleetKeeps.withLock { keeping in
                keeping.holding[device]?.downSince = downSince
                // Never back to false: a link-up event may have come since the snapshot.
                if wasUp { keeping.holding[device]?.wasUp = true }
            }
            let limit = wish.maxAttempts ?? configuration.roamFailedAttempts
            let failing = status?.status == .givenUp || (status?.failedAttempts ?? 0) >= limit
            let heardLately = snapshot.heardLocally[device].map { now - $0 < configuration.roamLostAfter } ?? false
            let lost = downSince.map { now - $0 >= configuration.roamLostAfter } == true && !heardLately
            if failing && choice.someoneElseHears(besides: me)
                || lost && choice.someoneElseHears(besides: me, evenPenalized: true)
            {
                release(device, epoch: holding.epoch, failed: true, publish: true)
            } else if choice.challenger(of: me) != nil {
                release(device, epoch: holding.epoch, failed: false, publish: true)
            }
        }

        // Held here by the fleet's record but not in hand: this gateway
        // restarted and learned it from its retained hold, or the wish
        // changed under its take, or its release has not come back (sent
        // again after `takeRetry`). Hold it again, or give it back.
        for (device, record) in snapshot.ownership.records where record.owner == me && snapshot.holding[device] == nil {
            guard connected, echoFresh else { continue }
            if let releasing = snapshot.releasing[device] {
                if let released = releasing, now - released >= Self.takeRetry {
                    fleetKeeps.withLock { $0.releasing[device] = .some(now) }
                    publishOwner(device, .release, epoch: record.epoch)
                }
                continue
            }
            if let wish = snapshot.wishes[device] {
                startHolding(wish, epoch: record.epoch)
            } else {
                publishOwner(device, .release, epoch: record.epoch)
            }
        }

        // What is free and could be taken here.
        guard connected, echoFresh, configuration.commands,
            let followedAt = snapshot.followedAt, now - followedAt >= Self.fleetKeepSettling
        else { return }
        for (device, wish) in snapshot.wishes where snapshot.holding[device] == nil {
            let record = snapshot.ownership.record(device)
            let freeAt: ContinuousClock.Instant
            if let owner = record.owner {
                guard owner != me, !online.contains(owner), let offline = snapshot.offlineSince[owner] else { continue }
                freeAt = offline + takeoverWait
            } else {
                freeAt = snapshot.freeSince[device] ?? followedAt
            }
            let choice = ownerChoice(wish, snapshot: snapshot, online: online, now: now)
            let order = choice.candidates()
            // A gateway that gave the device up stands aside while another
            // that hears it may take it (the penalty's point), instead of
            // racing it after a few steps.
            if choice.penalized.contains(me), choice.someoneElseHears(besides: me) { continue }
            guard let rank = order.firstIndex(of: me), now >= freeAt + Self.takeStep(configuration.claimStep) * rank,
                hasFreeSlot(for: wish)
            else { continue }
            let next = record.epoch + 1
            if let sent = snapshot.takesSent[device], sent.epoch == next, now - sent.at < Self.takeRetry { continue }
            fleetKeeps.withLock { $0.takesSent[device] = (next, now) }
            publishOwner(device, .take, epoch: next)
        }
    }

    /// A free connection slot on the pinned adapter, or on any powered
    /// adapter.
    private func hasFreeSlot(for wish: FleetKeep) -> Bool {
        poweredSlots().contains { slots in
            slots.free > 0 && (wish.pinnedAdapter.map { $0 == slots.adapter } ?? true)
        }
    }

    private func ownerChoice(
        _ wish: FleetKeep, snapshot: FleetKeeping, online: Set<String>, now: ContinuousClock.Instant
    ) -> OwnerChoice {
        let (hearings, full) = directory.withLock { directory in
            (
                directory.hearings(of: wish.address),
                online.filter {
                    directory.hasNoFreeSlot($0, adapter: $0 == wish.pinnedGateway ? wish.pinnedAdapter : nil)
                }
            )
        }
        return OwnerChoice(
            hearings: hearings.filter { online.contains($0.gateway) }, online: online,
            penalized: Set(online.filter { snapshot.isPenalized($0, for: wish.address, now: now) }),
            full: Set(full), pin: wish.pinnedGateway, prefer: wish.prefer, margin: configuration.roamMargin)
    }

    /// Lets go of a held device: disconnected first, then (when `publish`)
    /// the release, so that the next holder never meets this connection.
    private func release(_ device: String, epoch: Int, failed: Bool, publish: Bool) {
        let start = fleetKeeps.withLock { keeping -> Bool in
            guard keeping.holding[device] != nil, keeping.releasing[device] == nil else { return false }
            keeping.releasing[device] = .some(nil)
            return true
        }
        guard start else { return }
        Task {
            await releaseHold(device, timeout: keepAlive / 2)
            await waitForDisconnectedPublished(device)
            fleetKeeps.withLock { keeping in
                keeping.holding[device] = nil
                // Until the release comes back, unless none is sent.
                let released: ContinuousClock.Instant? = ContinuousClock.now
                if publish { keeping.releasing[device] = .some(released) } else { keeping.releasing[device] = nil }
            }
            if publish { publishOwner(device, .release, epoch: epoch, failed: failed) }
        }
    }

    /// Waits (briefly) until this gateway's `device-disconnected` for the
    /// device has gone out, so that the broker carries it before the
    /// release: whoever reads the topics in order never sees the next
    /// holder connected beside this one.
    private func waitForDisconnectedPublished(_ device: String) async {
        let topic = "\(topics.base)/devices/\(device)/connection"
        let deadline = ContinuousClock.now + .seconds(2)
        while connectionTopics.withLock({ $0[topic] == true }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// On a clean stop: every held device disconnected and released.
    func releaseAllHolds() async {
        guard configuration.fleet else { return }
        let held = fleetKeeps.withLock { keeping in
            defer { keeping.holding.removeAll() }
            return keeping.holding.map { ($0.key, $0.value.epoch) }
        }
        for (device, epoch) in held {
            await releaseHold(device, timeout: .seconds(5))
            if client.connectionState.isConnected { publishOwner(device, .release, epoch: epoch) }
        }
    }
}

extension Duration {
    /// The whole duration in nanoseconds (saturating).
    fileprivate var nanosecondsTotal: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000
    }
}
