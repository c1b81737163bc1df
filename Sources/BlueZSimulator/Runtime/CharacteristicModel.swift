/// The peripheral side of one characteristic: its value and its behaviour's
/// state, answering reads, writes and clock ticks as a GATT server would.
///
/// ATT errors are returned as their codes; the caller turns them into the
/// D-Bus errors bluetoothd would send.
struct CharacteristicModel {
    let spec: Scenario.Characteristic
    private(set) var value: [UInt8]
    private var counter: UInt64 = 0
    private var level = 0
    private var step = 0

    init(_ spec: Scenario.Characteristic) {
        self.spec = spec
        value = spec.value
        switch spec.behaviour {
        case .counter(let start, _, let size, _):
            counter = start
            value = Self.littleEndian(start, size: size)
        case .battery(let level, _, _, _):
            self.level = level
            value = [UInt8(clamping: level)]
        case .heartRate(let bpm, _, _):
            if value.isEmpty { value = [0x06, UInt8(clamping: bpm)] }
        case .thermometer(let celsius, _, _):
            if value.isEmpty { value = Self.temperature(celsius) }
        case .sequence(let values, _):
            value = values[0]
        default:
            break
        }
    }

    /// How often `tick` should run, if the behaviour changes with time.
    var period: Double? {
        switch spec.behaviour {
        case .counter(_, _, _, let rate) where rate > 0: 1 / rate
        case .heartRate(_, _, let rate) where rate > 0: 1 / rate
        case .thermometer(_, _, let rate) where rate > 0: 1 / rate
        case .sequence(_, let rate) where rate > 0: 1 / rate
        case .battery(_, let drain, let every, _) where drain > 0: every
        default: nil
        }
    }

    /// Answers a read at `offset` (ATT Read / Read Blob).
    mutating func read(offset: Int) -> Result<[UInt8], ATTFailure> {
        if case .failing(let error) = spec.behaviour { return .failure(ATTFailure(code: error)) }
        guard spec.flags.contains("read") else { return .failure(ATTFailure(code: ATTError.readNotPermitted)) }
        guard offset <= value.count else { return .failure(ATTFailure(code: ATTError.invalidOffset)) }
        let result = Array(value[offset...])
        // A counter without a rate counts its reads.
        if case .counter(_, let increment, let size, let rate) = spec.behaviour, rate == 0, offset == 0 {
            counter &+= increment
            value = Self.littleEndian(counter, size: size)
        }
        return .success(result)
    }

    /// Answers a write of `bytes` at `offset`; `withResponse` is false for a
    /// Write Command (which has no answer, so errors are dropped).
    mutating func write(_ bytes: [UInt8], offset: Int) -> UInt8? {
        if case .failing(let error) = spec.behaviour { return error }
        switch spec.behaviour {
        case .echo:
            guard offset <= value.count else { return ATTError.invalidOffset }
            value = Array(value[..<offset]) + bytes
        case .controlPoint(let accept, let error):
            guard accept.contains(bytes) else { return error }
            value = bytes
        default:
            guard offset <= max(value.count, 512) else { return ATTError.invalidOffset }
        }
        return nil
    }

    /// Advances the behaviour by one period; returns the new value when the
    /// peripheral would notify it.
    mutating func tick(random: inout SplitMix64) -> [UInt8]? {
        switch spec.behaviour {
        case .counter(_, let increment, let size, _):
            counter &+= increment
            value = Self.littleEndian(counter, size: size)
        case .heartRate(let bpm, let variation, _):
            let beat = bpm + (variation > 0 ? Int(random.next() % UInt64(2 * variation + 1)) - variation : 0)
            value = [0x06, UInt8(clamping: beat)]
        case .thermometer(let celsius, let variation, _):
            let offset = variation > 0 ? (Double(random.next() % 2001) / 1000 - 1) * variation : 0
            value = Self.temperature(celsius + offset)
        case .sequence(let values, _):
            step = (step + 1) % values.count
            value = values[step]
        case .battery(_, let drain, _, let minimum):
            let next = max(minimum, level - drain)
            guard next != level else { return nil }
            level = next
            value = [UInt8(clamping: level)]
        default:
            return nil
        }
        return value
    }

    /// Sets the value from outside (the control API); returns it.
    mutating func set(_ bytes: [UInt8]) {
        value = bytes
    }

    static func littleEndian(_ number: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: number >> (8 * UInt64($0))) }
    }

    /// Temperature Measurement: flags 0 (Celsius, no time stamp, no type),
    /// then an IEEE-11073 32-bit FLOAT with exponent -2.
    static func temperature(_ celsius: Double) -> [UInt8] {
        let mantissa = Int32((celsius * 100).rounded())
        let raw = UInt32(bitPattern: mantissa) & 0x00ff_ffff | UInt32(0xfe) << 24
        return [0x00] + littleEndian(UInt64(raw), size: 4)
    }
}

/// An ATT error response from the peripheral.
struct ATTFailure: Error {
    var code: UInt8
}

/// A small deterministic random generator (SplitMix64), so that a scenario
/// plays the same way every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
