import AsyncPrimitives
import Foundation
import Testing

@Suite struct SleepingMutexTests {
    @Test func threadsThatShareItNeverLoseAnUpdate() async {
        // More threads than this machine's cores, so that holders are
        // preempted while others wait.
        let counter = SleepingMutex(0)
        let threads = 8, rounds = 20_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            for _ in 0..<rounds { counter.withLock { $0 += 1 } }
                            done.resume()
                        }
                    }
                }
            }
        }
        #expect(counter.withLock { $0 } == threads * rounds)
    }

    @Test func anErrorThrownInsideLeavesItUnlocked() {
        struct Refused: Error {}
        let value = SleepingMutex("before")
        #expect(throws: Refused.self) {
            try value.withLock { (text: inout String) throws(Refused) in
                text = "changed"
                throw Refused()
            }
        }
        #expect(value.withLock { $0 } == "changed")
    }
}
