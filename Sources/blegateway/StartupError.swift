/// A reason the gateway cannot start, said so that the user knows what to do.
struct StartupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
