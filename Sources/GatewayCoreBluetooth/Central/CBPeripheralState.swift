/// Where a peripheral's connection is.
public enum CBPeripheralState: Int, Sendable {
    case disconnected = 0
    case connecting = 1
    case connected = 2
    case disconnecting = 3
}
