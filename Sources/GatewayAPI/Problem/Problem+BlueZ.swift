import BlueZ
import HTTPServer

extension Problem {
    /// The one table from BlueZ conditions to HTTP: 400 bad input, 403 not
    /// permitted or not paired, 404 unknown, 409 not connected / in progress
    /// / ambiguous, 502 the peripheral or the link failed, 503 adapter off or
    /// bluetoothd gone, 504 timeout. What the target cannot do at all (a
    /// characteristic that cannot notify) is the client's to know, so it is
    /// a 403 like BlueZ's own refusals of reads and writes, never a 5xx. The D-Bus
    /// error name, the ATT code and the candidates of an ambiguous name
    /// travel along.
    init(_ error: BlueZError) {
        let (kind, status): (Kind, Status) =
            switch error.code {
            case .invalidArguments: (.invalidRequest, .badRequest)
            case .attributeRefused: (.attributeRefused, .conflict)
            case .notPermitted: (.notPermitted, .forbidden)
            case .notAuthorized: (.notAuthorized, .forbidden)
            case .notPaired: (.notPaired, .forbidden)
            case .pairingRejected: (.pairingRejected, .forbidden)
            case .authenticationFailed: (.authenticationFailed, .forbidden)
            case .pairingCancelled: (.pairingCancelled, .conflict)
            case .pairingTimeout: (.pairingTimeout, .gatewayTimeout)
            case .notFound: (.notFound, .notFound)
            case .ambiguous: (.ambiguous, .conflict)
            case .notConnected: (.notConnected, .conflict)
            case .inProgress, .alreadyExists: (.inProgress, .conflict)
            case .notSupported: (.notSupported, .forbidden)
            case .connectionFailed, .peripheralFailed: (.peripheralFailed, .badGateway)
            case .poweredOff, .adapterUnavailable: (.adapterUnavailable, .serviceUnavailable)
            case .bluetoothdUnavailable: (.bluetoothdUnavailable, .serviceUnavailable)
            case .noConnectionSlot: (.noConnectionSlot, .serviceUnavailable)
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

/// The one place where a BlueZ error thrown by a handler becomes a response:
/// the problem of the table above, naming the request it answers.
extension BlueZError: ResponseConvertibleError {
    public func response(for request: Request?) -> Response {
        Problem(self).response(for: request)
    }
}
