import Foundation
import Testing

@testable import GatewayAPI

@Suite struct TimestampTests {
    @Test func writesWhatTheISO8601FormatStyleWrites() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var generator = SystemRandomNumberGenerator()
        var dates = [0, 1.0005, 1.9996, -1.5, -0.0001, 951_782_400.5, 1_764_000_000.0004999, 4_102_444_799.999]
            .map { Date(timeIntervalSince1970: $0) }
        // Instants from 1900 to 2100, to the microsecond.
        for _ in 0..<20_000 {
            let microseconds = Int64.random(in: -2_208_988_800_000_000...4_102_444_800_000_000, using: &generator)
            dates.append(Date(timeIntervalSince1970: Double(microseconds) / 1_000_000))
        }
        for date in dates {
            #expect(Timestamp.iso8601(date) == date.formatted(style), "\(date.timeIntervalSince1970)")
        }
    }
}
