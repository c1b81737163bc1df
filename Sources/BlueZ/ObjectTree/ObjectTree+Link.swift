import DBus

extension ObjectTree {
    /// `device` as the central hands it out: with the ATT MTU of its
    /// connection while connected. bluetoothd 5.66 has no MTU on `Device1`;
    /// each GATT characteristic carries the connection's (`MTU`, BlueZ
    /// 5.62+), so the first one that has it speaks for the link.
    func linkedDevice(_ device: Device) -> Device {
        var device = device
        device.mtu = nil
        guard device.connected else { return device }
        for characteristic in characteristics.values {
            guard let mtu = characteristic.mtu, services[characteristic.servicePath]?.devicePath == device.path else {
                continue
            }
            device.mtu = mtu
            break
        }
        return device
    }
}
