import Glibc

/// A certificate chain and private key for HTTPS (libmicrohttpd uses GnuTLS).
public struct TLSConfiguration: Sendable {
    /// The certificate chain, PEM encoded, leaf first.
    public var certificatePEM: String
    /// The private key, PEM encoded.
    public var privateKeyPEM: String
    /// The key's passphrase, if it is encrypted.
    public var keyPassword: String?

    /// The GnuTLS priority string the server uses: TLS 1.2 and 1.3 only;
    /// AEAD ciphers only (AES-GCM, ChaCha20-Poly1305), so no CBC; key
    /// exchange by ephemeral elliptic-curve Diffie-Hellman only, so every
    /// session has forward secrecy (no static RSA, and no finite-field DHE,
    /// whose group strength the client cannot choose); and the server's
    /// order wins over the client's (`%SERVER_PRECEDENCE`).
    static let priorities = """
        SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:\
        -MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:%SERVER_PRECEDENCE
        """

    /// The `Strict-Transport-Security` value every HTTPS response carries
    /// (unless the handler set its own): browsers keep to HTTPS for a year.
    static let strictTransportSecurity = "max-age=31536000"

    /// A configuration from PEM text already in memory.
    public init(certificatePEM: String, privateKeyPEM: String, keyPassword: String? = nil) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.keyPassword = keyPassword
    }

    /// Reads the certificate and key from PEM files.
    public init(certificateFile: String, privateKeyFile: String, keyPassword: String? = nil) throws(ServerError) {
        self.init(
            certificatePEM: try Self.read(certificateFile),
            privateKeyPEM: try Self.read(privateKeyFile),
            keyPassword: keyPassword)
    }

    private static func read(_ path: String) throws(ServerError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ServerError(.tlsConfiguration, "cannot open \(path): errno \(errno)")
        }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ServerError(.tlsConfiguration, "cannot read \(path): errno \(errno)")
            }
            if count == 0 { break }
            contents.append(contentsOf: chunk[0..<count])
            // A PEM file is small; a huge one is a mistake, not a certificate.
            guard contents.count <= 1024 * 1024 else {
                throw ServerError(.tlsConfiguration, "\(path) is too large for a PEM file")
            }
        }
        return String(decoding: contents, as: UTF8.self)
    }
}
