/// What the bridge told Home Assistant so far: the entities announced, the
/// last payload of each state topic (a reading is published again only when
/// it changes), and the link topics (a device's `connected` or `presence`,
/// the availability of its other entities) that a clean stop turns `OFF`.
struct HomeAssistantState {
    private var announced: Set<String> = []
    private var payloads: [String: String] = [:]
    private var links: Set<String> = []

    /// Whether the entity `key` is new (and so needs its discovery config).
    mutating func announce(_ key: String) -> Bool { announced.insert(key).inserted }

    /// Whether `payload` differs from what `topic` last carried (and if so,
    /// records it).
    mutating func change(_ topic: String, to payload: String) -> Bool {
        guard payloads[topic] != payload else { return false }
        payloads[topic] = payload
        return true
    }

    /// Records `topic` as a link topic.
    mutating func addLink(_ topic: String) { links.insert(topic) }

    func isLink(_ topic: String) -> Bool { links.contains(topic) }

    /// The link topics that say `ON` now; they are recorded as `OFF`.
    mutating func retireLinks() -> [String] {
        let on = links.filter { payloads[$0] == "ON" }
        for topic in on { payloads[topic] = "OFF" }
        return on.sorted()
    }
}
