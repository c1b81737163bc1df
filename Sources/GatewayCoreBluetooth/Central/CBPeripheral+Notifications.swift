import Foundation

extension CBPeripheral {
    /// Turns notifications (or indications) on or off.
    ///
    /// On: a notification stream of the gateway holds BlueZ's subscription
    /// while it is open; `didUpdateNotificationStateFor` follows once it is,
    /// then every value comes to `didUpdateValueFor`. With a restore
    /// identifier the manager also makes it a standing subscription, which
    /// the gateway keeps across its restarts and a new process restores
    /// (not through a fleet: standing subscriptions are one gateway's).
    public func setNotifyValue(_ enabled: Bool, for characteristic: CBCharacteristic) {
        perform { gateway in
            if enabled {
                await self.startNotifications(characteristic, gateway)
            } else {
                await self.stopNotifications(characteristic, gateway)
            }
        }
    }

    private func startNotifications(_ characteristic: CBCharacteristic, _ gateway: GatewayClient) async {
        if await onQueue({ self.notificationStreams[ObjectIdentifier(characteristic)] != nil }) {
            deliver { peripheral, delegate in
                delegate?.peripheral(peripheral, didUpdateNotificationStateFor: characteristic, error: nil)
            }
            return
        }
        do {
            if restoreIdentifier != nil, !fleet, let service = characteristic.service {
                try await gateway.send(
                    "POST", "/v1/subscriptions",
                    json: StandingRequest(
                        device: address, characteristic: characteristic.uuid.gatewayString, service: service.uuid.gatewayString,
                        mode: characteristic.properties.contains(.notify) ? "notify" : "indicate", adapter: adapter))
            }
            try await openStream(characteristic, gateway)
            deliver { peripheral, delegate in
                delegate?.peripheral(peripheral, didUpdateNotificationStateFor: characteristic, error: nil)
            }
        } catch {
            let error = CBError.from(error)
            deliver { peripheral, delegate in
                delegate?.peripheral(peripheral, didUpdateNotificationStateFor: characteristic, error: error)
            }
        }
    }

    /// Opens the characteristic's notification stream and reads it in a
    /// task of its own: values go to the delegate until the stream ends.
    @discardableResult
    func openStream(_ characteristic: CBCharacteristic, _ gateway: GatewayClient) async throws(GatewayError) -> EventStream {
        let stream = try await gateway.events(
            valuePath(characteristic) + "/notifications", query: adapterQuery + [URLQueryItem(name: "encoding", value: "hex")])
        await onQueue {
            characteristic.isNotifying = true
            self.notificationStreams[ObjectIdentifier(characteristic)] = stream
        }
        Task { [weak self] in
            do {
                for try await event in stream {
                    guard let self else { return }
                    if event.type == "notification", let json = try? event.decode(GatewayJSON.Notification.self),
                        let value = Hex.decode(json.value)
                    {
                        self.deliver { peripheral, delegate in
                            characteristic.currentValue = value
                            delegate?.peripheral(peripheral, didUpdateValueFor: characteristic, error: nil)
                        }
                    } else if event.type == "subscription-ended" {
                        break
                    }
                }
            } catch {}
            guard let queue = self?.queue else { return }
            queue.async { [weak self] in
                guard let self, self.notificationStreams[ObjectIdentifier(characteristic)] === stream else { return }
                self.notificationStreams[ObjectIdentifier(characteristic)] = nil
                characteristic.isNotifying = false
            }
        }
        return stream
    }

    private func stopNotifications(_ characteristic: CBCharacteristic, _ gateway: GatewayClient) async {
        let stream = await onQueue { () -> EventStream? in
            characteristic.isNotifying = false
            return self.notificationStreams.removeValue(forKey: ObjectIdentifier(characteristic))
        }
        stream?.close()
        var failure: (any Error)?
        if restoreIdentifier != nil, !fleet {
            do {
                try await removeStandingSubscriptions(gateway, of: characteristic)
            } catch {
                failure = CBError.from(error)
            }
        }
        let error = failure
        deliver { peripheral, delegate in
            delegate?.peripheral(peripheral, didUpdateNotificationStateFor: characteristic, error: error)
        }
    }

    /// Ends the standing subscriptions of this device (of one
    /// characteristic, or all of them).
    func removeStandingSubscriptions(_ gateway: GatewayClient, of characteristic: CBCharacteristic? = nil) async throws(GatewayError) {
        let standing = try await gateway.decode([GatewayJSON.StandingSubscription].self, "GET", "/v1/subscriptions")
        for subscription in standing where subscription.device == address {
            if let characteristic {
                guard CBUUID(validating: subscription.characteristic) == characteristic.uuid,
                    subscription.service.flatMap(CBUUID.init(validating:)) == characteristic.service?.uuid
                else { continue }
            }
            try await gateway.send("DELETE", "/v1/subscriptions/\(subscription.id)")
        }
    }
}

struct StandingRequest: Encodable, Sendable {
    var device: String
    var characteristic: String
    var service: String
    var mode: String
    var adapter: String?
}
