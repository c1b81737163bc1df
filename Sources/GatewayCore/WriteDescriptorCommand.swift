/// Write bytes to a descriptor at `offset` (descriptors have no write
/// types: BlueZ always writes them with a response).
public struct WriteDescriptorCommand: Sendable, Hashable {
    public let descriptor: DescriptorTarget
    public let value: [UInt8]
    public let offset: UInt16
    public let timeout: Duration?

    public init(descriptor: DescriptorTarget, value: [UInt8], offset: UInt16 = 0, timeout: Duration? = nil) {
        self.descriptor = descriptor
        self.value = value
        self.offset = offset
        self.timeout = timeout
    }
}
