import Foundation
import Testing
@testable import PersistedState
import TestSupport

/// The peripheral role's applications and advertisements, and the values
/// clients set on them, written and read back across close and reopen.
@Suite struct PublishedTests {
    @Test func publishedItemsAndTheirValuesAreSavedRemovedAndRestored() async throws {
        let temporary = try TemporaryDirectory()
        let first = Date(timeIntervalSince1970: 1_700_000_000)
        var store = try Store.open(directory: temporary.path, options: testOptions())
        let application = PublishedItem(
            kind: .application, id: "app1", adapter: "hci0", definition: Array(#"{"services":[]}"#.utf8), created: first)
        try await store.savePublished(application)
        try await store.savePublished(
            PublishedItem(kind: .advertisement, id: "adv1", adapter: "hci1", definition: Array("{}".utf8), created: first + 1))
        try await store.savePublished(
            PublishedItem(kind: .application, id: "app2", adapter: "hci0", definition: Array("{}".utf8), created: first + 2))
        #expect(try await store.setPublishedValue([0x00, 0x50], characteristic: 0, application: "app1"))
        #expect(try await store.setPublishedValue([0x01], characteristic: 2, application: "app1"))
        #expect(try await store.setPublishedValue([0x02], characteristic: 2, application: "app1"))
        // No value without its application; an advertisement has none.
        #expect(try await store.setPublishedValue([0x03], characteristic: 0, application: "app9") == false)
        #expect(try await store.setPublishedValue([0x03], characteristic: 0, application: "adv1") == false)
        #expect(try await store.removePublished(.application, id: "app2"))
        #expect(try await store.removePublished(.application, id: "app2") == false)
        // The same id of the other kind is another item.
        #expect(try await store.removePublished(.application, id: "adv1") == false)
        await store.close()

        store = try Store.open(directory: temporary.path, options: testOptions())
        let restored = try await store.publishedItems()
        #expect(restored.map(\.id) == ["app1", "adv1"])
        #expect(restored.map(\.kind) == [.application, .advertisement])
        #expect(restored.first?.adapter == "hci0" && restored.last?.adapter == "hci1")
        #expect(restored.first?.definition == application.definition)
        #expect(restored.first?.values == [0: [0x00, 0x50], 2: [0x02]])
        #expect(restored.last?.values == [:])

        // Saving an application again starts it over without values.
        try await store.savePublished(application)
        #expect(try await store.publishedItems().first?.values == [:])
        // Its values go with it.
        #expect(try await store.setPublishedValue([0x04], characteristic: 1, application: "app1"))
        #expect(try await store.removePublished(.application, id: "app1"))
        try await store.savePublished(application)
        #expect(try await store.publishedItems().first { $0.id == "app1" }?.values == [:])
        await store.close()
    }
}
