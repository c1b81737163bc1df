/// Reads little- or big-endian integers from a payload, front to back,
/// nil once the bytes run out.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// An unsigned integer of `count` bytes.
    mutating func unsigned(_ count: Int, bigEndian: Bool = false) -> UInt64? {
        guard let part = take(count) else { return nil }
        let ordered = bigEndian ? part : part.reversed()
        return ordered.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A two's-complement integer of `count` bytes.
    mutating func signed(_ count: Int, bigEndian: Bool = false) -> Int64? {
        guard let value = unsigned(count, bigEndian: bigEndian) else { return nil }
        let bits = UInt64(count * 8)
        guard bits < 64, value & (1 << (bits - 1)) != 0 else { return Int64(bitPattern: value) }
        return Int64(value) - Int64(1 << bits)
    }
}
