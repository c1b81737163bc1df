extension Problem.Kind {
    /// The attribute needs an encrypted link: pair first
    /// (`POST /v1/devices/{address}/pair`, or `?pair=auto`).
    public static let notPaired = Self("not-paired", title: "The device must be paired first")
    /// The agent's client, the gateway (no answer in time) or the device
    /// refused to pair.
    public static let pairingRejected = Self("pairing-rejected", title: "Pairing was rejected")
    /// A wrong passkey or PIN, or a device that could not complete pairing.
    public static let authenticationFailed = Self("authentication-failed", title: "Pairing failed: authentication failed")
    /// The device, or the link going down, cancelled pairing.
    public static let pairingCancelled = Self("pairing-cancelled", title: "Pairing was cancelled")
    /// The device did not answer the pairing exchange in time.
    public static let pairingTimeout = Self("pairing-timeout", title: "The device did not complete pairing in time")
}
