import CGnuTLS

/// A TLS client session over a connected socket, with GnuTLS (the library
/// libmicrohttpd serves HTTPS with, so the image needs nothing more). The
/// only user of CGnuTLS.
///
/// Verifies the server's certificate against the system's trusted CAs and
/// `host`, unless `verify` is false (a self-signed certificate on one's own
/// gateway).
final class TLSClientSession {
    private var credentials: gnutls_certificate_credentials_t?
    private var session: gnutls_session_t?

    /// The handshake's failure, as GnuTLS words it.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs the handshake on `fd` (`gnutls_handshake`), within
    /// `timeoutMilliseconds`.
    init(fd: Int32, host: String, verify: Bool, timeoutMilliseconds: UInt32) throws(Failure) {
        try check(gnutls_certificate_allocate_credentials(&credentials))
        if verify { _ = gnutls_certificate_set_x509_system_trust(credentials) }
        try check(gnutls_init(&session, UInt32(GNUTLS_CLIENT)))
        try check(gnutls_set_default_priority(session))
        try check(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials)))
        // Server Name Indication is for names, not addresses.
        if host.contains(where: \.isLetter), !host.contains(":") {
            _ = gnutls_server_name_set(session, GNUTLS_NAME_DNS, host, host.utf8.count)
        }
        if verify { gnutls_session_set_verify_cert(session, host, 0) }
        blegateway_gnutls_transport_set_fd(session, fd)
        gnutls_handshake_set_timeout(session, timeoutMilliseconds)
        var result: Int32
        repeat { result = gnutls_handshake(session) } while result < 0 && gnutls_error_is_fatal(result) == 0
        try check(result)
    }

    deinit {
        if let session { gnutls_deinit(session) }
        if let credentials { gnutls_certificate_free_credentials(credentials) }
    }

    /// Sends all of `bytes`; false on failure.
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { gnutls_record_send(session, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Receives into `buffer`: the byte count, 0 at the end, -1 on failure.
    func receive(into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { gnutls_record_recv(session, $0.baseAddress, $0.count) }
            if count == Int(GNUTLS_E_AGAIN) || count == Int(GNUTLS_E_INTERRUPTED) { continue }
            // A peer that closes without close_notify has still said all it will.
            if count == Int(GNUTLS_E_PREMATURE_TERMINATION) { return 0 }
            return count < 0 ? -1 : count
        }
    }

    private func check(_ result: Int32) throws(Failure) {
        guard result < 0 else { return }
        throw Failure(description: String(cString: gnutls_strerror(result)))
    }
}
