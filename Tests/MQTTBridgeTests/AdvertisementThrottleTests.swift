import Testing

@testable import MQTTBridge

@Suite struct AdvertisementThrottleTests {
    @Test func onePerIntervalPerDeviceTheLatestWins() {
        var throttle = AdvertisementThrottle(interval: .seconds(1))
        let start = ContinuousClock.now
        #expect(throttle.offer(device: "A", topic: "a", json: "1", now: start)?.json == "1")
        #expect(throttle.offer(device: "B", topic: "b", json: "1", now: start)?.json == "1")
        #expect(throttle.offer(device: "A", topic: "a", json: "2", now: start + .milliseconds(100)) == nil)
        #expect(throttle.offer(device: "A", topic: "a", json: "3", now: start + .milliseconds(500)) == nil)
        #expect(throttle.due(now: start + .milliseconds(900)).isEmpty)
        #expect(throttle.due(now: start + .seconds(1)).map(\.json) == ["3"])
        #expect(throttle.due(now: start + .seconds(3)).isEmpty)
        // The interval starts again from the flushed one.
        #expect(throttle.offer(device: "A", topic: "a", json: "4", now: start + .milliseconds(1500)) == nil)
        #expect(throttle.offer(device: "A", topic: "a", json: "5", now: start + .milliseconds(2000))?.json == "5")
        #expect(throttle.offer(device: "B", topic: "b", json: "2", now: start + .milliseconds(200)) == nil)
        throttle.forget("B")
        #expect(throttle.due(now: start + .seconds(10)).isEmpty)
    }
}
