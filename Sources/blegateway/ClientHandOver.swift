import Glibc

/// `blegateway scan`, `read`, ... and `version`: the client commands live in
/// `blegateway-client`, installed beside `blegateway`, and the server's
/// executable hands them over with `execv` before parsing anything. Users
/// type the same commands; the server does not link FoundationNetworking
/// (libcurl and its TLS and Kerberos libraries), Foundation or ICU, which
/// the client's URLSession needs (BENCHMARKS.md has the figures).
enum ClientHandOver {
    /// The commands of `blegateway-client` (its BLEGatewayClient.swift).
    static let commands: Set<String> = [
        "scan", "devices", "connect", "disconnect", "pair", "gatt", "read", "write", "notify", "events", "keep",
        "subscribe", "version",
    ]
    static let executableName = "blegateway-client"

    /// `blegateway COMMAND ...` and `blegateway help COMMAND`.
    static func handles(_ arguments: [String]) -> Bool {
        guard let first = arguments.first else { return false }
        if first == "help", arguments.count > 1 { return commands.contains(arguments[1]) }
        return commands.contains(first)
    }

    /// Replaces this process with `blegateway-client ARGUMENTS` (the one
    /// beside this executable, else the one on PATH); returns only to exit
    /// with a message when neither can be run.
    static func execute(_ arguments: [String]) -> Never {
        let argv = ["blegateway"] + arguments
        let beside = besideThisExecutable()
        if let beside { run(argv) { execv(beside, $0) } }
        let besideError = errno
        run(argv) { execvp(executableName, $0) }
        let location = beside.map { "\($0) (\(String(cString: strerror(besideError))))" } ?? "beside blegateway"
        let message = Array(
            ("blegateway: '\(arguments.first ?? "")' is a client command, run by \(executableName), which is not at "
                + "\(location) nor on PATH (\(String(cString: strerror(errno))))\n").utf8)
        _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(127)
    }

    /// The client's path next to this executable's real path (/proc/self/exe).
    private static func besideThisExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[...slash]) + executableName
    }

    /// Calls `exec` with `argv` as a C array; returns when the exec failed.
    private static func run(_ argv: [String], _ exec: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32) {
        var pointers: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        _ = pointers.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { exec($0) }
        }
    }
}
