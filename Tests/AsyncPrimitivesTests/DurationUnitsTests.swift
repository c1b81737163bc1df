import AsyncPrimitives
import Testing

@Suite struct DurationUnitsTests {
    @Test func millisecondsRoundTowardZero() {
        #expect(Duration.seconds(2).milliseconds == 2000)
        #expect(Duration.microseconds(1999).milliseconds == 1)
        #expect(Duration.nanoseconds(1).milliseconds == 0)
        #expect(Duration.milliseconds(-1500).milliseconds == -1500)
        #expect(Duration.microseconds(-1500).milliseconds == -1)
    }

    @Test func roundedUpNeverEndsEarly() {
        #expect(Duration.seconds(2).millisecondsRoundedUp == 2000)
        #expect(Duration.microseconds(1001).millisecondsRoundedUp == 2)
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect(Duration.microseconds(-1500).millisecondsRoundedUp == -1)
    }

    @Test func nanosecondsAndSeconds() {
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        #expect(Duration.milliseconds(1500).secondsValue == 1.5)
    }

    @Test func hugeDurationsSaturate() {
        #expect(Duration.seconds(Int64.max).milliseconds == .max)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
        #expect(Duration.seconds(Int64.max).millisecondsRoundedUp == .max)
    }
}
