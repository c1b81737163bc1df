import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// A client command's failure: the problem's detail for stderr and the
/// exit status of its outcome (the table in `ClientExitStatus`).
struct ClientFailure: Error, CustomStringConvertible {
    var status: Int32
    var description: String

    init(status: Int32, _ description: String) {
        self.status = status
        self.description = description
    }

    init(_ error: any Error) {
        switch error {
        case let failure as ClientFailure:
            self = failure
        case let gateway as GatewayError:
            self.init(gateway)
        case let cb as CBError:
            if let gateway = cb.gatewayError {
                self.init(gateway)
            } else {
                self.init(status: cb.code == .operationNotSupported ? 1 : 9, cb.detail)
            }
        case let att as CBATTError:
            if let gateway = att.gatewayError {
                self.init(gateway)
            } else {
                self.init(status: ClientExitStatus.peripheralFailed, att.description)
            }
        default:
            self.init(status: 1, "\(error)")
        }
    }

    init(_ error: GatewayError) {
        var text = error.detail
        if let status = error.status { text += " (HTTP \(status)" + (error.problem.map { ", \($0)" } ?? "") + ")" }
        if let dbus = error.dbusError { text += " [\(dbus)]" }
        if let att = error.attError { text += " [ATT error 0x\(String(att, radix: 16))]" }
        self.init(status: ClientExitStatus.of(httpStatus: error.status), text)
    }
}

/// What the client commands' exit statuses mean (also in their help).
enum ClientExitStatus {
    static let help = """
        Exit status: 0 done; 1 failed otherwise; 3 no such device, characteristic or resource (404); \
        4 conflict: not connected, busy or ambiguous (409); 5 refused: API key, not permitted or not \
        paired (401, 403); 6 the peripheral failed or answered an ATT error (502); 7 Bluetooth unavailable \
        (503); 8 timed out (504); 9 the gateway cannot be reached; 64 bad usage. The problem's detail goes \
        to stderr.
        """
    static let peripheralFailed: Int32 = 6

    static func of(httpStatus: Int?) -> Int32 {
        switch httpStatus {
        case nil: 9
        case 404?: 3
        case 409?: 4
        case 401?, 403?: 5
        case 502?: peripheralFailed
        case 503?: 7
        case 504?: 8
        default: 1
        }
    }
}

/// Runs a client command's body: a failure goes to stderr as its detail,
/// and the process exits with its outcome's status.
func runClient(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ValidationError {
        throw error
    } catch let error as ExitCode {
        throw error
    } catch {
        let failure = ClientFailure(error)
        FileHandle.standardError.write(Data("blegateway: \(Terminal.safe(failure.description))\n".utf8))
        throw ExitCode(failure.status)
    }
}
