#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// The timestamps of events and values: RFC 3339 in UTC with milliseconds
/// (`2026-11-24T16:39:31.664Z`), exactly as
/// `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` writes them
/// (milliseconds truncated), without its calendar machinery: every
/// notification value gets one for its stream and one for the store, on
/// the threads that deliver values, so it is made with `gmtime_r` and
/// digits written into one buffer.
enum Timestamp {
    static func iso8601(_ date: Date) -> String {
        // Whole seconds, then the fraction's milliseconds, as the format
        // style takes them (milliseconds from the whole interval differ in
        // the last digit now and then, the fraction being inexact).
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 253_402_300_800 else {
            // Beyond year 9999 (or not a date): the format style's answer.
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let millis = min(999, Int((interval - seconds) * 1000))
        var time = time_t(Int64(seconds))
        var fields = tm()
        gmtime_r(&time, &fields)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var index = 0
            func put(_ value: Int, digits: Int) {
                var remaining = value
                for position in stride(from: digits - 1, through: 0, by: -1) {
                    buffer[index + position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                    remaining /= 10
                }
                index += digits
            }
            func put(_ character: Unicode.Scalar) {
                buffer[index] = UInt8(ascii: character)
                index += 1
            }
            put(Int(fields.tm_year) + 1900, digits: 4)
            put("-")
            put(Int(fields.tm_mon) + 1, digits: 2)
            put("-")
            put(Int(fields.tm_mday), digits: 2)
            put("T")
            put(Int(fields.tm_hour), digits: 2)
            put(":")
            put(Int(fields.tm_min), digits: 2)
            put(":")
            put(Int(fields.tm_sec), digits: 2)
            put(".")
            put(millis, digits: 3)
            put("Z")
            return index
        }
    }
}
