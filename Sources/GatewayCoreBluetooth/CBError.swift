import Foundation

public let CBErrorDomain = "CBErrorDomain"
public let CBATTErrorDomain = "CBATTErrorDomain"

/// Core Bluetooth's errors. `.unsupported` (this library's addition, as
/// `CBError.Code.operationNotSupported` is on Apple's platforms) says an API
/// has no counterpart through the gateway. `gatewayError` keeps the
/// gateway's problem (its detail, HTTP status and D-Bus error).
public struct CBError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Int, Sendable {
        case unknown = 0
        case invalidParameters = 1
        case invalidHandle = 2
        case notConnected = 3
        case outOfSpace = 4
        case operationCancelled = 5
        case connectionTimeout = 6
        case peripheralDisconnected = 7
        case uuidNotAllowed = 8
        case alreadyAdvertising = 9
        case connectionFailed = 10
        case connectionLimitReached = 11
        case unknownDevice = 12
        case operationNotSupported = 13
        case peerRemovedPairingInformation = 14
        case encryptionTimedOut = 15
        case tooManyLEPairedDevices = 16
    }

    public static let unknown = Code.unknown
    public static let invalidParameters = Code.invalidParameters
    public static let notConnected = Code.notConnected
    public static let operationCancelled = Code.operationCancelled
    public static let connectionTimeout = Code.connectionTimeout
    public static let peripheralDisconnected = Code.peripheralDisconnected
    public static let alreadyAdvertising = Code.alreadyAdvertising
    public static let connectionFailed = Code.connectionFailed
    public static let unknownDevice = Code.unknownDevice
    public static let operationNotSupported = Code.operationNotSupported
    /// An API with no counterpart through the gateway.
    public static let unsupported = Code.operationNotSupported

    public var code: Code
    public var detail: String
    public var gatewayError: GatewayError?

    public init(_ code: Code, detail: String = "", gatewayError: GatewayError? = nil) {
        self.code = code
        self.detail = detail
        self.gatewayError = gatewayError
    }

    public static func == (lhs: CBError, rhs: CBError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var errorCode: Int { code.rawValue }
    public var localizedDescription: String { description }
    public var description: String { "CBError.\(code) (\(code.rawValue)): \(detail)" }

    /// The error a gateway problem means: an ATT error becomes `CBATTError`.
    static func from(_ error: any Error) -> any Error {
        guard let error = error as? GatewayError else {
            return error is CBError || error is CBATTError ? error : CBError(.unknown, detail: "\(error)")
        }
        if let att = error.attError {
            var attError = CBATTError(rawCode: att)
            attError.gatewayError = error
            return attError
        }
        let code: Code =
            switch (error.status, error.problem) {
            case (409?, "not-connected"?): .notConnected
            case (404?, _): .unknownDevice
            case (400?, _): .invalidParameters
            case (403?, "not-supported"?): .operationNotSupported
            case (504?, _): .connectionTimeout
            case (502?, _): .connectionFailed
            default: .unknown
            }
        return CBError(code, detail: error.detail, gatewayError: error)
    }

    static func unsupported(_ api: String, _ why: String) -> CBError {
        CBError(.operationNotSupported, detail: "\(api) has no counterpart through the gateway: \(why)")
    }
}

/// An ATT error the peripheral (or a central) answered with.
public struct CBATTError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Int, Sendable {
        case success = 0x00
        case invalidHandle = 0x01
        case readNotPermitted = 0x02
        case writeNotPermitted = 0x03
        case invalidPdu = 0x04
        case insufficientAuthentication = 0x05
        case requestNotSupported = 0x06
        case invalidOffset = 0x07
        case insufficientAuthorization = 0x08
        case prepareQueueFull = 0x09
        case attributeNotFound = 0x0A
        case attributeNotLong = 0x0B
        case insufficientEncryptionKeySize = 0x0C
        case invalidAttributeValueLength = 0x0D
        case unlikelyError = 0x0E
        case insufficientEncryption = 0x0F
        case unsupportedGroupType = 0x10
        case insufficientResources = 0x11
        /// Application errors, 0x80-0x9F, carry their own codes: see `rawCode`.
        case applicationError = 0x80
    }

    public static let success = Code.success
    public static let invalidHandle = Code.invalidHandle
    public static let readNotPermitted = Code.readNotPermitted
    public static let writeNotPermitted = Code.writeNotPermitted
    public static let requestNotSupported = Code.requestNotSupported
    public static let invalidOffset = Code.invalidOffset
    public static let insufficientAuthorization = Code.insufficientAuthorization
    public static let invalidAttributeValueLength = Code.invalidAttributeValueLength
    public static let unlikelyError = Code.unlikelyError
    public static let insufficientResources = Code.insufficientResources

    public var code: Code
    /// The code on the wire (0x80-0x9F for an application error).
    public var rawCode: Int
    public var gatewayError: GatewayError?

    public init(_ code: Code, gatewayError: GatewayError? = nil) {
        self.code = code
        rawCode = gatewayError?.attError ?? code.rawValue
        self.gatewayError = gatewayError
    }

    init(rawCode: Int) {
        code = Code(rawValue: rawCode) ?? ((0x80...0x9f).contains(rawCode) ? .applicationError : .unlikelyError)
        self.rawCode = rawCode
    }

    public static func == (lhs: CBATTError, rhs: CBATTError) -> Bool { lhs.rawCode == rhs.rawCode }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawCode) }

    public var errorCode: Int { rawCode }
    public var localizedDescription: String { description }
    public var description: String {
        "CBATTError.\(code) (0x\(String(rawCode, radix: 16)))" + (gatewayError.map { ": \($0.detail)" } ?? "")
    }
}
