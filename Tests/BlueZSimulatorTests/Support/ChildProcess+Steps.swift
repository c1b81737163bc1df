import Testing
import TestSupport

extension ChildProcess {
    /// Sends `command` (when there is one) and waits, up to 15 s each, for
    /// every one of `texts` to appear in what the program (bluetoothctl) printed after it.
    func step(_ command: String?, expect texts: [String]) async throws {
        let mark = standardOutput.count
        if let command { write(command + "\n") }
        for text in texts {
            let deadline = ContinuousClock.now + .seconds(15)
            var recent = ""
            repeat {
                recent = String(standardOutput.dropFirst(mark))
                if recent.contains(text) { break }
                try await Task.sleep(for: .milliseconds(20))
            } while ContinuousClock.now < deadline
            #expect(recent.contains(text), "after '\(command ?? "start")': no '\(text)' in:\n\(recent)")
            guard recent.contains(text) else { throw WaitTimeout("bluetoothctl output") }
        }
    }
}
