import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's public HTTP API, as a client: requests with JSON bodies,
/// RFC 9457 problems as `GatewayError`, and Server-Sent-Event streams.
///
/// HTTP comes from `URLSession` (FoundationNetworking over libcurl, both
/// shipped with the Swift toolchain): the gateway already links Foundation,
/// so the client adds no package, no SwiftNIO and no second TLS stack to
/// the `blegateway` binary, where async-http-client would add NIO and
/// BoringSSL. FoundationNetworking on Linux has no `bytes(for:)`, so
/// streams read the body through a data delegate and `ServerSentEventParser`.
public final class GatewayClient: Sendable {
    /// The gateway's base URL (`http://host:port`).
    public let baseURL: URL
    let apiKey: String?
    private let session: URLSession

    public init(location: GatewayLocation) {
        baseURL = location.url
        apiKey = location.apiKey
        let configuration = URLSessionConfiguration.ephemeral
        // The gateway's own deadlines (`timeout_ms`, at most 120 s) end
        // Bluetooth operations; this only catches a gateway gone silent.
        configuration.timeoutIntervalForRequest = 180
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    func request(_ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil) -> URLRequest {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = components.percentEncodedPath.trimmingSuffix("/") + path
        components.queryItems = query.isEmpty ? nil : query
        var request = URLRequest(url: components.url ?? baseURL)
        request.httpMethod = method
        if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends a request and returns the body of a 2xx answer; any other
    /// answer is thrown as the problem it carries.
    @discardableResult
    public func send(
        _ method: String, _ path: String, query: [URLQueryItem] = [], json: (any Encodable & Sendable)? = nil
    ) async throws(GatewayError) -> Data {
        var body: Data?
        if let json {
            do {
                body = try JSONEncoder.gateway.encode(json)
            } catch {
                throw GatewayError(detail: "cannot encode the request: \(error)")
            }
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request(method, path, query: query, body: body))
        } catch {
            throw GatewayError(unreachable: baseURL, error)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw GatewayError(status: status, body: data, path: path) }
        return data
    }

    /// Sends a request and decodes the JSON of its answer.
    public func decode<T: Decodable>(
        _ type: T.Type, _ method: String = "GET", _ path: String, query: [URLQueryItem] = [],
        json: (any Encodable & Sendable)? = nil
    ) async throws(GatewayError) -> T {
        let data = try await send(method, path, query: query, json: json)
        do {
            return try JSONDecoder.gateway.decode(type, from: data)
        } catch {
            throw GatewayError(detail: "the gateway's answer to \(method) \(path) is not what its API describes: \(error)")
        }
    }

    /// Opens a Server-Sent-Event stream: returns once the gateway answered
    /// 200 (so the scan, subscription or event feed it starts is running),
    /// or throws its problem.
    public func events(_ path: String, query: [URLQueryItem] = [], lastEventID: String? = nil) async throws(GatewayError)
        -> EventStream
    {
        var request = request("GET", path, query: query)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        return try await EventStream.open(request, path: path, baseURL: baseURL)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

extension JSONDecoder {
    static var gateway: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}

extension JSONEncoder {
    static var gateway: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
