import HTTPServer

extension Response {
    /// A JSON response.
    static func json(_ json: JSON, status: Status = .ok) -> Response {
        .bytes(json.bytes, status: status, contentType: "application/json")
    }
}
