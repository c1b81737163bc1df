/// Read a descriptor's value from `offset`; the result is its bytes.
public struct ReadDescriptorCommand: Sendable, Hashable {
    public let descriptor: DescriptorTarget
    public let offset: UInt16
    public let timeout: Duration?

    public init(descriptor: DescriptorTarget, offset: UInt16 = 0, timeout: Duration? = nil) {
        self.descriptor = descriptor
        self.offset = offset
        self.timeout = timeout
    }
}
