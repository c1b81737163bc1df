/// Who holds each fleet-kept device, decided only by the messages on
/// `<prefix>/any/owner/<address>` in the order the broker delivers them
/// (docs/fleet.md, "Never two connections"). Every gateway applies the
/// same rules to the same sequence, so all agree on the holder without a
/// coordinator, whatever each believed when it sent its message.
///
/// - `take` (not retained) of epoch *e*: accepted when *e* is one more than
///   the current epoch and the device is free, or its holder is offline (at
///   that point of the sequence: the status topics come through the same
///   subscription, in the broker's order), or the taker holds it already.
///   Of two takes for one epoch the first wins; the second is stale.
/// - `hold` (retained, published by a holder once its take is accepted and
///   again after each reconnection): tells a gateway that missed the take
///   (it started later, or was cut off) who holds the device; a higher
///   epoch than the one known always wins, since only an accepted take
///   makes one.
/// - `release` (retained, by the holder once it has disconnected): free.
struct FleetOwnership {
    enum Action: String, Sendable {
        case take, hold, release
    }

    struct Record: Sendable, Equatable {
        var owner: String?
        var epoch: Int
        /// The last release said the holder's attempts failed.
        var failed = false
    }

    private(set) var records: [String: Record] = [:]

    func record(_ device: String) -> Record { records[device] ?? Record(owner: nil, epoch: 0) }

    /// Applies one message; returns the new record when it changed who
    /// holds the device (or the epoch).
    mutating func apply(
        _ action: Action, by gateway: String, epoch: Int, failed: Bool = false, device: String,
        isOnline: (String) -> Bool
    ) -> Record? {
        let current = record(device)
        var next = current
        switch action {
        case .take:
            let free = current.owner.map { $0 == gateway || !isOnline($0) } ?? true
            guard epoch == current.epoch + 1, free else { return nil }
            next = Record(owner: gateway, epoch: epoch)
        case .hold:
            guard epoch > current.epoch || (epoch == current.epoch && current.owner == nil && current.epoch == 0)
            else { return nil }
            next = Record(owner: gateway, epoch: epoch)
        case .release:
            guard epoch > current.epoch || (epoch == current.epoch && current.owner == gateway) else { return nil }
            next = Record(owner: nil, epoch: epoch, failed: failed)
        }
        guard next != current else { return nil }
        records[device] = next
        return next
    }

    mutating func forget(_ device: String) { records[device] = nil }
}
