import BlueZ
import HTTPServer

extension Problem {
    /// The one table from BlueZ conditions to HTTP: 400 bad input, 403 not
    /// permitted or not paired, 404 unknown, 409 not connected / in progress
    /// / ambiguous, 501 not supported, 502 the peripheral or the link
    /// failed, 503 adapter off or bluetoothd gone, 504 timeout. The D-Bus
    /// error name, the ATT code and the candidates of an ambiguous name
    /// travel along.
    init(_ error: BlueZError) {
        let (kind, status): (Kind, Status) =
            switch error.code {
            case .invalidArguments: (.invalidRequest, .badRequest)
            case .notPermitted: (.notPermitted, .forbidden)
            case .notPaired, .notAuthorized: (.notAuthorized, .forbidden)
            case .notFound: (.notFound, .notFound)
            case .ambiguous: (.ambiguous, .conflict)
            case .notConnected: (.notConnected, .conflict)
            case .inProgress, .alreadyExists: (.inProgress, .conflict)
            case .notSupported: (.notSupported, .notImplemented)
            case .connectionFailed, .peripheralFailed: (.peripheralFailed, .badGateway)
            case .poweredOff, .adapterUnavailable: (.adapterUnavailable, .serviceUnavailable)
            case .bluetoothdUnavailable: (.bluetoothdUnavailable, .serviceUnavailable)
            case .timeout: (.timeout, .gatewayTimeout)
            case .cancelled: (.unavailable, .serviceUnavailable)
            default: (.bluetoothFailed, .badGateway)
            }
        self.init(kind, status: status, detail: error.message, dbusError: error.dbusName, attError: error.attError)
        if error.code == .ambiguous, !error.candidates.isEmpty {
            candidates = error.candidates.map { candidate in
                var entry = [
                    "service": candidate.serviceUUID.uuidString, "characteristic": candidate.uuid.uuidString,
                ]
                if let handle = candidate.handle { entry["handle"] = String(handle) }
                return entry
            }
        }
    }
}

/// Runs a central operation, its errors as problems.
func bluez<T>(_ body: () async throws(BlueZError) -> T) async throws(Problem) -> T {
    do {
        return try await body()
    } catch {
        throw Problem(error)
    }
}

/// Reads a central snapshot, its errors as problems.
func bluez<T>(_ body: () throws(BlueZError) -> T) throws(Problem) -> T {
    do {
        return try body()
    } catch {
        throw Problem(error)
    }
}
