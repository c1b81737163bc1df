/// How a `Client` connects and what it keeps when the broker is away.
public struct Configuration: Sendable {
    /// The broker. A user name and password in the URL are used unless
    /// `credentials` is set.
    public var broker: BrokerURL
    /// The client identifier; the broker allows one connection per id (a
    /// second connection with the same id takes the first one over).
    public var clientID: String
    /// User name and password (the password may be nil: MQTT allows a user
    /// name alone).
    public var credentials: Credentials?
    /// Files for `mqtts://`: the CA certificate that signed the broker's
    /// certificate (nil: the system's CA directory), and a client
    /// certificate and key for brokers that ask for one.
    public var tls: TLSFiles
    /// Seconds between the client's PINGREQs when nothing else is sent; the
    /// broker declares the client gone (and publishes its Will) after 1.5 times
    /// this. Between 5 and 65535.
    public var keepAlive: Int
    public var protocolVersion: ProtocolVersion
    /// The Last Will, set on every connection.
    public var will: Will?
    /// True: the broker keeps no session across connections (the client
    /// subscribes again after each reconnect, which it does anyway).
    public var cleanStart: Bool
    /// MQTT 5: seconds the broker keeps the session (subscriptions and the
    /// QoS 1/2 messages for them) after the connection ends; nil for 0, the
    /// session ends with the connection. With `cleanStart` false and this
    /// set, messages published while this client is away wait for it.
    /// (Under MQTT 3.1.1, a session without clean start lasts until the
    /// broker expires it.)
    public var sessionExpiryInterval: UInt32?
    /// MQTT 5: the largest packet this client accepts, told to the broker in
    /// CONNECT; the broker drops larger messages instead of sending them, so
    /// a huge publication never reaches this process's memory. nil: no limit.
    public var maximumPacketSize: UInt32?
    /// The wait before the first reconnect attempt; it doubles after each
    /// failure up to `maximumReconnectDelay`, and starts over after a
    /// connection succeeds.
    public var reconnectDelay: Duration
    public var maximumReconnectDelay: Duration
    /// QoS 1/2 messages handed to libmosquitto and not yet acknowledged, at
    /// most. libmosquitto keeps these itself and sends them again after a
    /// reconnect.
    public var inFlightLimit: Int
    /// QoS 1/2 messages held beyond `inFlightLimit` (while the broker is slow
    /// or away), at most. When it is full, the oldest is dropped and counted.
    /// So at most `inFlightLimit + outboxCapacity` messages wait in all.
    public var outboxCapacity: Int

    public struct Credentials: Sendable, Hashable {
        public var username: String
        public var password: String?
        public init(username: String, password: String?) {
            self.username = username
            self.password = password
        }
    }

    public struct TLSFiles: Sendable, Hashable {
        public var caFile: String?
        public var certificateFile: String?
        public var keyFile: String?
        public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    public init(
        broker: BrokerURL, clientID: String, credentials: Credentials? = nil, tls: TLSFiles = TLSFiles(),
        keepAlive: Int = 30, protocolVersion: ProtocolVersion = .v5, will: Will? = nil, cleanStart: Bool = true,
        sessionExpiryInterval: UInt32? = nil, maximumPacketSize: UInt32? = nil,
        reconnectDelay: Duration = .milliseconds(500), maximumReconnectDelay: Duration = .seconds(30),
        inFlightLimit: Int = 100, outboxCapacity: Int = 10_000
    ) {
        self.broker = broker
        self.clientID = clientID
        self.credentials = credentials
        self.tls = tls
        self.keepAlive = keepAlive
        self.protocolVersion = protocolVersion
        self.will = will
        self.cleanStart = cleanStart
        self.sessionExpiryInterval = sessionExpiryInterval
        self.maximumPacketSize = maximumPacketSize
        self.reconnectDelay = reconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
        self.inFlightLimit = inFlightLimit
        self.outboxCapacity = outboxCapacity
    }

    /// The credentials used: `credentials`, else those in the URL.
    public var effectiveCredentials: Credentials? {
        credentials ?? broker.username.map { Credentials(username: $0, password: broker.password) }
    }
}
