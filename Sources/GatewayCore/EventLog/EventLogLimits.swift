/// The bounds every `EventLog` keeps (a generic class cannot hold them).
enum EventLogLimits {
    /// The devices `blegateway_characteristic_values_total` names one by one.
    static let countedDevices = 256

    /// The most stored events read at once by a subscriber catching up.
    static let storePageSize = 512
}
