import AsyncPrimitives
import CMicroHTTPD
import Glibc
import Synchronization

/// A running `MHD_Daemon` and the memory it points into.
///
/// Threading, as libmicrohttpd 0.9.75 behaves: one internal polling thread
/// using poll(), with suspend/resume. Not epoll (it stalls with 128+
/// connections ready at once), not AUTO (picks epoll), not
/// thread-per-connection (burns CPU with suspend/resume and can hang stop).
// @unchecked Sendable: `pointer`, `logger` and `secrets` are set in init and
// freed only by `stop`, which the Server calls once, after which nothing
// uses them; the listen socket is guarded by a Mutex. MHD_quiesce_daemon
// and MHD_stop_daemon may be called from any thread.
final class Daemon: @unchecked Sendable {
    let core: ServerCore
    /// The bound port (the real one when the configuration said 0).
    let port: Int
    private let pointer: OpaquePointer
    private let logger: UnsafeMutablePointer<cmhd_logger>
    /// PEM, password and priority-string copies handed to MHD; freed after
    /// it stops.
    private let secrets: [UnsafeMutablePointer<CChar>]
    private let quiescedSocket = Mutex<Int32>(-1)

    /// Starts the daemon; MHD's thread is running when this returns.
    init(core: ServerCore) throws(ServerError) {
        let configuration = core.configuration
        var address = try BindAddress.resolve(host: configuration.host, port: configuration.port)
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        if address.family == AF_INET6 {
            flags |= address.isUnspecifiedIPv6 ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
        }
        let coreContext = Unmanaged.passUnretained(core).toOpaque()
        let limit = max(1, configuration.connectionLimit)
        let logger = UnsafeMutablePointer<cmhd_logger>.allocate(capacity: 1)
        logger.initialize(to: cmhd_logger(sink: daemonLogCallback, cls: coreContext))

        var options: [MHD_OptionItem] = [
            // First, or MHD logs its own complaint about it to stderr.
            cmhd_option_logger(logger),
            // Past `connectionLimit`, the reserve's slots answer 503 (see
            // ConnectionGuard) instead of leaving clients in the backlog.
            cmhd_option_value(MHD_OPTION.CONNECTION_LIMIT, limit + ConnectionGuard.reserve(for: limit)),
            cmhd_option_value(MHD_OPTION.CONNECTION_MEMORY_LIMIT, Self.memoryLimit(configuration)),
            cmhd_option_value(MHD_OPTION.CONNECTION_TIMEOUT, Self.seconds(configuration.idleTimeout)),
            cmhd_option_value(MHD_OPTION.LISTEN_BACKLOG_SIZE, max(1, configuration.listenBacklog)),
            cmhd_option_notify_completed(requestCompletedCallback, coreContext),
            cmhd_option_uri_log(uriLogCallback, coreContext),
            cmhd_option_notify_connection(connectionNotifyCallback, coreContext),
        ]
        var secrets: [UnsafeMutablePointer<CChar>] = []
        if let tls = configuration.tls {
            flags |= MHD_USE_TLS.rawValue
            let certificate = strdup(tls.certificatePEM), key = strdup(tls.privateKeyPEM)
            secrets += [certificate, key].compactMap { $0 }
            options.append(cmhd_option_pointer(MHD_OPTION.HTTPS_MEM_CERT, certificate))
            options.append(cmhd_option_pointer(MHD_OPTION.HTTPS_MEM_KEY, key))
            if let password = tls.keyPassword, let copy = strdup(password) {
                secrets.append(copy)
                options.append(cmhd_option_pointer(MHD_OPTION.HTTPS_KEY_PASSWORD, copy))
            }
            if let priorities = strdup(TLSConfiguration.priorities) {
                secrets.append(priorities)
                options.append(cmhd_option_pointer(MHD_OPTION.HTTPS_PRIORITIES, priorities))
            }
        }
        let started: OpaquePointer? = withUnsafeMutablePointer(to: &address.storage) { storage in
            options.append(cmhd_option_pointer(MHD_OPTION.SOCK_ADDR, UnsafeMutableRawPointer(storage)))
            options.append(cmhd_option_value(MHD_OPTION.END, 0))
            return options.withUnsafeMutableBufferPointer { items in
                cmhd_start_daemon(
                    flags, UInt16(configuration.port), nil, nil, accessHandlerCallback, coreContext, items.baseAddress)
            }
        }
        guard let started else {
            logger.deallocate()
            for secret in secrets { Self.wipe(secret) }
            let detail = core.lastDaemonMessage.withLock { $0 } ?? "no detail"
            let code: ServerError.Code = configuration.tls == nil ? .startFailed : .tlsConfiguration
            throw ServerError(code, "cannot listen on \(configuration.host):\(configuration.port): \(detail)")
        }
        self.core = core
        self.pointer = started
        self.logger = logger
        self.secrets = secrets
        self.port = Int(cmhd_daemon_port(started))
    }

    /// Stops accepting connections (the listen socket stays open until
    /// `stop`, since MHD hands its closing to us).
    func quiesce() {
        let socket = MHD_quiesce_daemon(pointer)
        quiescedSocket.withLock { $0 = socket }
    }

    /// MHD_stop_daemon: joins MHD's thread, closing every connection (their
    /// completed callbacks run first). Every suspended connection must have
    /// been resumed before this. Call once.
    func stop() {
        MHD_stop_daemon(pointer)
        quiescedSocket.withLock { socket in
            if socket >= 0 { close(socket) }
            socket = -1
        }
        logger.deallocate()
        for secret in secrets { Self.wipe(secret) }
    }

    /// Zeroes and frees a copy of key material.
    private static func wipe(_ secret: UnsafeMutablePointer<CChar>) {
        memset(secret, 0, strlen(secret))
        free(secret)
    }

    /// Memory per connection: at least what the configuration asks, and
    /// six times `maxHeaderSize`. libmicrohttpd keeps the head in this
    /// pool, plus an entry (about 64 bytes) per header field; a head that
    /// does not fit gets libmicrohttpd's own HTML page instead of reaching
    /// the access handler (which answers 414 or 431, or 431 for more than
    /// `maxHeaderFields`, through the error factory). With the default 4 KiB
    /// limit (24 KiB of pool), measured on 0.9.75: heads up to about 20 KiB,
    /// and up to about 300 fields in a head within the limit, reach the
    /// handler.
    ///
    /// Every open stream holds this much for as long as it lasts:
    /// libmicrohttpd zeroes the part of the pool its read buffer gave back,
    /// so the pool is resident, not just reserved (measured: 18 KiB per
    /// idle stream at 24 KiB, 14 KiB at 12 KiB, client side included).
    static func memoryLimit(_ configuration: ServerConfiguration) -> Int {
        max(4096, configuration.connectionMemoryLimit, 6 * configuration.maxHeaderSize)
    }

    /// Whole seconds, rounded up, for MHD's second-granularity timeout.
    private static func seconds(_ duration: Duration) -> Int {
        let milliseconds = duration.millisecondsRoundedUp
        guard milliseconds > 0 else { return 0 }
        return milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)
    }
}
