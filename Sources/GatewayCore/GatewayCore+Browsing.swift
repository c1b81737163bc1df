import BlueZ

// The GATT database and descriptors: what a client reads to find its way
// around a device before it reads and writes characteristics.
extension GatewayCore {
    /// The services of a connected device. A device that is not connected
    /// is `.bluez(.notConnected)`; services not resolved yet give an empty
    /// list.
    public func services(_ command: ServicesCommand) throws(GatewayCommandError) -> [GATTService] {
        let address = command.device.address
        do {
            return try central.services(of: address, adapter: adapter(of: command.device), serviceUUIDs: command.services)
        } catch {
            throw .bluez(error)
        }
    }

    /// One characteristic with its descriptors, and its service's UUID (a
    /// characteristic whose service went away meanwhile is not found).
    public func characteristic(_ command: CharacteristicCommand) throws(GatewayCommandError)
        -> (characteristic: GATTCharacteristic, service: BluetoothUUID)
    {
        let target = command.characteristic
        let found: GATTCharacteristic
        do {
            found = try central.characteristic(target.selector, of: target.device.address, adapter: adapter(of: target.device))
        } catch {
            throw .bluez(error)
        }
        guard let service = found.serviceUUID else { throw .notFound("the characteristic's service is gone") }
        return (found, service)
    }

    public func readDescriptor(_ command: ReadDescriptorCommand) async throws(GatewayCommandError) -> [UInt8] {
        let owner = command.descriptor.characteristic
        do {
            return try await central.readDescriptor(
                command.descriptor.selector, of: owner.selector, device: owner.device.address,
                adapter: adapter(of: owner.device), offset: command.offset, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }

    public func writeDescriptor(_ command: WriteDescriptorCommand) async throws(GatewayCommandError) {
        let owner = command.descriptor.characteristic
        do {
            try await central.writeDescriptor(
                command.value, to: command.descriptor.selector, of: owner.selector, device: owner.device.address,
                adapter: adapter(of: owner.device), offset: command.offset, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }
}
