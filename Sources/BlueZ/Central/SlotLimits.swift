/// How many connections each adapter may hold at once: one limit for every
/// adapter, and overrides by adapter id.
///
/// BlueZ does not tell: none of the Adapter1 properties in
/// org.bluez.Adapter.rst is a controller's connection limit, so the limit
/// is configured, and 7 by default: typical adapters hold 5 to 10 links.
public struct SlotLimits: Sendable, Hashable, CustomStringConvertible {
    /// The limit of an adapter without an override.
    public var perAdapter: Int
    /// Limits by adapter id (`hci1`).
    public var overrides: [String: Int]

    public static let defaultPerAdapter = 7

    public init(perAdapter: Int = SlotLimits.defaultPerAdapter, overrides: [String: Int] = [:]) {
        self.perAdapter = perAdapter
        self.overrides = overrides
    }

    /// The limit of `adapter`.
    public func limit(of adapter: String) -> Int { overrides[adapter] ?? perAdapter }

    /// Reads `7`, `hci1=5` or `7,hci1=5,hci2=10`: a bare number sets the
    /// limit of every adapter, `hciN=M` one adapter's. Limits are 1 to 100;
    /// anything else throws, saying why.
    public init(parsing text: String) throws(ParseError) {
        var limits = SlotLimits()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let part = item.filter { $0 != " " }
            let pieces = part.split(separator: "=", omittingEmptySubsequences: false)
            guard let count = Int(pieces.last ?? ""), (1...100).contains(count), pieces.count <= 2 else {
                throw ParseError(.invalidSlotLimit, "'\(part)' is not a limit: give N or hciN=N, N from 1 to 100")
            }
            if pieces.count == 2 {
                let adapter = String(pieces[0])
                guard AdapterName.isValid(adapter) else {
                    throw ParseError(.invalidAdapterName, "'\(adapter)' is not an adapter name (hci0, hci1, ...)")
                }
                limits.overrides[adapter] = count
            } else {
                limits.perAdapter = count
            }
        }
        self = limits
    }

    /// The form `init(parsing:)` reads.
    public var description: String {
        ([String(perAdapter)] + overrides.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: ",")
    }
}
