import HTTPServer

/// What a gateway serves and how.
public struct GatewayConfiguration: Sendable {
    /// The version reported by `GET /v1`.
    public var version: String
    /// When set, every route but `/health` needs `Authorization: Bearer <key>`.
    public var apiKey: String?
    /// Browser origins allowed to call the API (`*` for any); empty: no CORS.
    public var corsOrigins: Set<String>
    /// The adapter used when a request names none (nil: BlueZ's first).
    public var defaultAdapter: String?
    /// Whether the gateway runs on its built-in simulator (reported by `GET /v1`).
    public var simulated: Bool
    /// How many past events `GET /v1/events` can replay.
    public var replayBufferSize: Int
    /// The comment heartbeat of event streams.
    public var heartbeatInterval: Duration
    /// How much a slow stream client may fall behind before it is dropped,
    /// unless it asks for more with `?buffer_kib=`.
    public var streamBufferBytes: Int
    /// The most a stream's client may ask for with `?buffer_kib=` (a larger
    /// request is capped to it). The buffer grows only with what the client
    /// has not read: a client that keeps up costs nothing more.
    public var maximumStreamBufferBytes: Int = 16 * 1024 * 1024
    /// Operations' timeout when the request gives none.
    public var defaultTimeout: Duration
    /// The longest `timeout_ms` a request may ask for.
    public var maximumTimeout: Duration
    /// The default and longest `POST /v1/scan` durations.
    public var defaultScanDuration: Duration
    public var maximumScanDuration: Duration
    /// Renders the metrics in the Prometheus text format for `GET /metrics`
    /// (the program's metrics backend); nil: `/metrics` answers 404.
    public var metricsExposition: (@Sendable () -> [UInt8])?
    /// How long a pairing request waits for a client's answer before the
    /// gateway rejects it.
    public var pairingRequestTimeout: Duration = .seconds(60)
    /// How long a scan stream waits without hearing a device before it
    /// reports the device `lost` (a request's `presence_timeout_ms`
    /// overrides it); nil: only when bluetoothd removes it.
    public var presenceTimeout: Duration? = nil
    /// How many kept devices, standing subscriptions, peripheral
    /// applications and advertisements clients may create.
    public var quotas = Quotas()

    public init(
        version: String = "0.1.0", apiKey: String? = nil, corsOrigins: Set<String> = [], defaultAdapter: String? = nil,
        simulated: Bool = false, replayBufferSize: Int = 4096, heartbeatInterval: Duration = .seconds(15),
        streamBufferBytes: Int = 256 * 1024, defaultTimeout: Duration = .seconds(30),
        maximumTimeout: Duration = .seconds(120), defaultScanDuration: Duration = .seconds(5),
        maximumScanDuration: Duration = .seconds(60), metricsExposition: (@Sendable () -> [UInt8])? = nil
    ) {
        self.version = version
        self.apiKey = apiKey
        self.corsOrigins = corsOrigins
        self.defaultAdapter = defaultAdapter
        self.simulated = simulated
        self.replayBufferSize = replayBufferSize
        self.heartbeatInterval = heartbeatInterval
        self.streamBufferBytes = streamBufferBytes
        self.defaultTimeout = defaultTimeout
        self.maximumTimeout = maximumTimeout
        self.defaultScanDuration = defaultScanDuration
        self.maximumScanDuration = maximumScanDuration
        self.metricsExposition = metricsExposition
    }
}

extension GatewayConfiguration {
    /// The configuration of an event stream's writer: the gateway's, with
    /// the buffer the request asks for (`?buffer_kib=`, capped to
    /// `maximumStreamBufferBytes`). A client that cannot afford to miss a
    /// value through a stall of its own (a process descheduled for a moment
    /// on a busy host) asks for more than the default.
    func streamConfiguration(for request: Request) throws(Problem) -> StreamConfiguration {
        var bytes = streamBufferBytes
        if let kibibytes = try request.integer("buffer_kib", in: 1...(1 << 30)) {
            bytes = min(kibibytes * 1024, max(maximumStreamBufferBytes, streamBufferBytes))
        }
        return StreamConfiguration(heartbeatInterval: heartbeatInterval, maxBufferedBytes: bytes)
    }
}
