/// The version both executables print: `blegateway` (the server) and
/// `blegateway-client` (the client commands it hands over to).
public enum GatewayVersion {
    public static let string = "0.1.0"
}
