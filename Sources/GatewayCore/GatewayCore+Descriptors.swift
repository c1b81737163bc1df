import BlueZ

// A characteristic's descriptors, read and written by the doors that offer
// them (the REST routes under `…/descriptors/{descriptor}`).
extension GatewayCore {
    public func readDescriptor(_ command: ReadDescriptorCommand) async throws(GatewayCommandError) -> [UInt8] {
        let target = command.descriptor
        do {
            return try await central.readDescriptor(
                target.selector, of: target.characteristic.selector, device: target.device.address,
                adapter: adapter(of: target.device), offset: command.offset, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }

    public func writeDescriptor(_ command: WriteDescriptorCommand) async throws(GatewayCommandError) {
        let target = command.descriptor
        do {
            try await central.writeDescriptor(
                command.value, to: target.selector, of: target.characteristic.selector, device: target.device.address,
                adapter: adapter(of: target.device), offset: command.offset, timeout: command.timeout)
        } catch {
            throw .bluez(error)
        }
    }
}
