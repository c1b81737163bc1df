/// Write bytes to a descriptor at `offset` (always with a response:
/// descriptors have no write without one).
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
