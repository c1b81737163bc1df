import Foundation
import Testing
import TestSupport

/// Two `blegateway serve --mqtt` processes on one mosquitto, each over its
/// own simulator: `/v1/fleet/…` on either reaches every device of the fleet
/// (docs/fleet.md).
@Suite(.serialized) struct FleetHTTPTests {
    /// Heard by both gateways: weakly by g-a, strongly by g-b.
    static let shared = "C4:7C:8D:6A:3F:01"
    /// Heard by g-b only.
    static let onlyB = "C4:7C:8D:6A:3F:02"
    static let key = "fleet-secret"
    static let auth = ["Authorization": "Bearer \(key)"]

    static func device(_ address: String, rssi: Int, battery: String) -> String {
        """
          - address: "\(address)"
            name: Fleet \(address.suffix(2))
            rssi: \(rssi)
            advertising:
              interval: 0.1
              uuids: ["180f"]
            connection:
              delay: 0.1
              resolveDelay: 0.1
            services:
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read, write, notify]
                    value: "\(battery)"
                    behaviour: echo
        """
    }

    static func scenario(adapter: Int, devices: [String]) -> String {
        """
        timing: 1
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:72:1\(adapter)"
        devices:
        \(devices.joined(separator: "\n"))
        """
    }

    @Test func anyGatewayReachesEveryDeviceOfTheFleet() async throws {
        let broker = try await Broker.start()
        let a = try await GatewayUnderTest.start(
            scenario: Self.scenario(adapter: 0, devices: [Self.device(Self.shared, rssi: -75, battery: "0a")]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-a", "--mqtt-commands", "--api-key", Self.key])
        let b = try await GatewayUnderTest.start(
            scenario: Self.scenario(
                adapter: 1,
                devices: [
                    Self.device(Self.shared, rssi: -55, battery: "1b"), Self.device(Self.onlyB, rssi: -60, battery: "2b"),
                ]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-b", "--mqtt-commands", "--api-key", Self.key])
        // Presence is published while a gateway scans.
        let scans = [try a.stream("/v1/scan", headers: Self.auth), try b.stream("/v1/scan", headers: Self.auth)]
        func stopAll() async {
            for scan in scans { scan.close() }
            // A gateway that follows the fleet's events stops as cleanly as any.
            #expect(await a.stop() == 0, "\(a.process.standardError.suffix(2000))")
            #expect(await b.stop() == 0, "\(b.process.standardError.suffix(2000))")
            await broker.stop()
        }

        // The merged view, through g-a: the shared device heard by both,
        // strongest first; the other by g-b only.
        let (merged, fetched) = await Self.poll(timeout: .seconds(60)) {
            try await a.get("/v1/fleet/devices", headers: Self.auth).array
        } until: { devices in
            let sharedHearers = Self.entry(Self.shared, in: devices)?["heard_by"] as? [[String: Any]] ?? []
            let onlyBHearers = Self.entry(Self.onlyB, in: devices)?["heard_by"] as? [[String: Any]] ?? []
            return sharedHearers.count == 2 && onlyBHearers.count == 1
        }
        let devices = fetched ?? []
        #expect(merged, "\(devices)")
        let sharedHearers = Self.entry(Self.shared, in: devices)?["heard_by"] as? [[String: Any]] ?? []
        #expect(sharedHearers.map { $0["gateway"] as? String } == ["g-b", "g-a"], "\(sharedHearers)")
        #expect(sharedHearers.first?["rssi"] as? Int == -55)
        #expect(sharedHearers.first?["adapter"] as? String == "hci0")
        #expect(sharedHearers.first?["fresh"] as? Bool == true)
        let average = sharedHearers.last?["rssi_average"] as? Double ?? 0
        #expect((-80.0)...(-70.0) ~= average, "\(sharedHearers)")
        let onlyBHearers = Self.entry(Self.onlyB, in: devices)?["heard_by"] as? [[String: Any]] ?? []
        #expect(onlyBHearers.map { $0["gateway"] as? String } == ["g-b"])
        let one = try await a.get("/v1/fleet/devices/\(Self.onlyB)", headers: Self.auth)
        #expect(one.status == 200 && one.object["address"] as? String == Self.onlyB, "\(one)")
        let unknown = try await a.get("/v1/fleet/devices/C4:7C:8D:6A:3F:99", headers: Self.auth)
        #expect(unknown.status == 404 && unknown.contentType == "application/problem+json", "\(unknown)")

        // The gateways, seen from g-b.
        let gateways = try await b.get("/v1/fleet/gateways", headers: Self.auth).array
        #expect(gateways.map { $0["id"] as? String } == ["g-a", "g-b"], "\(gateways)")
        #expect(gateways.allSatisfy { $0["online"] as? Bool == true }, "\(gateways)")
        #expect(gateways.map { $0["self"] as? Bool } == [false, true])
        #expect(gateways.map { $0["devices_heard"] as? Int } == [1, 2], "\(gateways)")
        #expect(gateways.allSatisfy { $0["last_seen"] is String }, "\(gateways)")

        // The API key guards the fleet routes as it guards the others.
        #expect(try await a.get("/v1/fleet/devices").status == 401)
        #expect(try await a.request("POST", "/v1/fleet/devices/\(Self.onlyB)/connect").status == 401)

        // Through g-a, to the device only g-b hears.
        let events = try a.stream("/v1/fleet/events", headers: Self.auth)
        defer { events.close() }
        try await Task.sleep(for: .seconds(1))
        let connect = try await a.request(
            "POST", "/v1/fleet/devices/\(Self.onlyB)/connect?timeout_ms=20000", headers: Self.auth)
        #expect(connect.status == 200 && connect.headers["gateway"] == "g-b", "\(connect)")
        #expect(connect.object["connected"] as? Bool == true, "\(connect)")
        let read = try await a.get("/v1/fleet/devices/\(Self.onlyB)/characteristics/2a19/value", headers: Self.auth)
        #expect(read.status == 200 && read.headers["gateway"] == "g-b", "\(read)")
        #expect(read.object["value"] as? String == "2b", "\(read)")
        let write = try await a.request(
            "PUT", "/v1/fleet/devices/\(Self.onlyB)/characteristics/2a19/value", json: #"{"value":"2c"}"#,
            headers: Self.auth)
        #expect(write.status == 204 && write.headers["gateway"] == "g-b", "\(write)")
        let direct = try await b.get("/v1/devices/\(Self.onlyB)/characteristics/2a19/value", headers: Self.auth)
        #expect(direct.object["value"] as? String == "2c", "\(direct)")
        // A problem stays a problem, and says who answered.
        let missing = try await a.get("/v1/fleet/devices/\(Self.onlyB)/characteristics/2a00/value", headers: Self.auth)
        #expect(missing.status == 404 && missing.contentType == "application/problem+json", "\(missing)")
        #expect(missing.headers["gateway"] == "g-b", "\(missing)")
        // A mistake in the request is this gateway's 400, before the broker.
        let invalid = try await a.get("/v1/fleet/devices/\(Self.onlyB)/characteristics/zz/value", headers: Self.auth)
        #expect(invalid.status == 400 && invalid.headers["gateway"] == nil, "\(invalid)")

        // The combined stream carries g-b's connection, tagged.
        let connected = await events.waitFor(timeout: .seconds(20)) { received in
            received.contains { $0.type == "device-connected" && $0.json["gateway"] as? String == "g-b" }
        }
        let tagged = connected.first { $0.type == "device-connected" }
        #expect(tagged?.json["address"] as? String == Self.onlyB, "\(connected.map(\.data))")
        #expect(tagged?.id != nil)
        // Resumable within this gateway's buffer: from just before it, the
        // same event again, with the same id.
        if let id = tagged?.id.flatMap(UInt64.init), id > 0 {
            let resumed = try a.stream("/v1/fleet/events", headers: Self.auth.merging(["Last-Event-ID": String(id - 1)]) { $1 })
            defer { resumed.close() }
            let replayed = await resumed.waitFor(timeout: .seconds(20)) { $0.contains { $0.id == tagged?.id } }
            let again = replayed.first { $0.id == tagged?.id }
            #expect(again?.type == "device-connected" && again?.json["gateway"] as? String == "g-b", "\(replayed.map(\.data))")
        } else {
            Issue.record("the tagged event has no numeric id: \(String(describing: tagged?.id))")
        }

        // Kept through g-a: g-b keeps it, and the merged view says so.
        let keep = try await a.request(
            "PUT", "/v1/fleet/devices/\(Self.onlyB)/keep", json: #"{"label":"fleet"}"#, headers: Self.auth)
        #expect((200...201).contains(keep.status) && keep.headers["gateway"] == "g-b", "\(keep)")
        let keptStatus = try await a.get("/v1/fleet/devices/\(Self.onlyB)/keep", headers: Self.auth)
        #expect(keptStatus.status == 200 && keptStatus.object["label"] as? String == "fleet", "\(keptStatus)")
        let keptSeen: Bool
        var view: [String: Any]?
        (keptSeen, view) = await Self.poll(timeout: .seconds(20)) {
            try await a.get("/v1/fleet/devices/\(Self.onlyB)", headers: Self.auth).object
        } until: { view in
            (view["kept_by"] as? [[String: Any]])?.first?["gateway"] as? String == "g-b"
                && (view["connected_on"] as? [String]) == ["g-b"]
        }
        #expect(keptSeen, "\(view ?? [:])")
        #expect(view?["kept"] as? Bool == true)
        let unkeep = try await a.request("DELETE", "/v1/fleet/devices/\(Self.onlyB)/keep", headers: Self.auth)
        #expect(unkeep.status == 204 && unkeep.headers["gateway"] == "g-b", "\(unkeep)")
        let released: Bool
        (released, view) = await Self.poll(timeout: .seconds(20)) {
            try await a.get("/v1/fleet/devices/\(Self.onlyB)", headers: Self.auth).object
        } until: { $0["kept"] as? Bool == false }
        #expect(released, "\(view ?? [:])")
        let disconnect = try await a.request("POST", "/v1/fleet/devices/\(Self.onlyB)/disconnect", headers: Self.auth)
        #expect(disconnect.status == 200 && disconnect.headers["gateway"] == "g-b", "\(disconnect)")
        await stopAll()
    }

    /// Heard by g-b only: a characteristic with a described, writable
    /// descriptor, and a control point that refuses what it does not
    /// accept with ATT error 0x80.
    static let browsed = "C4:7C:8D:6A:3F:03"
    static let browsedDevice = """
          - address: "\(browsed)"
            name: Fleet browsed
            rssi: -58
            advertising:
              interval: 0.1
              uuids: ["180f"]
            connection:
              delay: 0.1
              resolveDelay: 0.1
            services:
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read, notify]
                    value: "61"
                    descriptors:
                      - uuid: "2901"
                        text: Battery
                      - uuid: "0000ff10-0000-1000-8000-00805f9b34fb"
                        value: "0102"
                        flags: [read, write]
              - uuid: "180d"
                characteristics:
                  - uuid: "2a39"
                    flags: [write]
                    behaviour: { kind: control-point, accept: ["01"], error: 0x80 }
              - uuid: "0000ff00-0000-1000-8000-00805f9b34fb"
                characteristics:
                  - uuid: "0000ff03-0000-1000-8000-00805f9b34fb"
                    flags: [read, write]
                    value: "0000"
                    encrypted: true
            pairing:
              accept: false
        """

    @Test func theGATTDatabaseAndDescriptorsThroughAnyGateway() async throws {
        let broker = try await Broker.start()
        let a = try await GatewayUnderTest.start(
            scenario: Self.scenario(adapter: 3, devices: [Self.device("C4:7C:8D:6A:3F:04", rssi: -70, battery: "01")]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-a", "--mqtt-commands", "--api-key", Self.key])
        let b = try await GatewayUnderTest.start(
            scenario: Self.scenario(adapter: 4, devices: [Self.browsedDevice]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-b", "--mqtt-commands", "--api-key", Self.key])
        let scan = try b.stream("/v1/scan", headers: Self.auth)
        let device = "/v1/fleet/devices/\(Self.browsed)"
        let (heard, _) = await Self.poll(timeout: .seconds(60)) {
            try await a.get(device, headers: Self.auth)
        } until: { $0.status == 200 }
        #expect(heard)

        // Not connected yet: the holder's 409, carried.
        let early = try await a.get(device + "/services", headers: Self.auth)
        #expect(early.status == 409 && early.headers["gateway"] == "g-b", "\(early)")
        #expect(early.object["type"] as? String == "urn:blegateway:problem:not-connected", "\(early)")

        let connect = try await a.request("POST", device + "/connect?timeout_ms=20000", headers: Self.auth)
        #expect(connect.status == 200 && connect.headers["gateway"] == "g-b", "\(connect)")

        // The browse is the holder's own, byte for byte.
        let forwarded = try await a.get(device + "/services", headers: Self.auth)
        let local = try await b.get("/v1/devices/\(Self.browsed)/services", headers: Self.auth)
        #expect(forwarded.status == 200 && forwarded.headers["gateway"] == "g-b", "\(forwarded)")
        #expect(local.status == 200 && forwarded.text == local.text, "\(forwarded.text)\n\(local.text)")
        let uuids = forwarded.array.map { $0["uuid"] as? String }
        #expect(uuids.contains("0000180f-0000-1000-8000-00805f9b34fb"), "\(uuids)")
        // `?service=`, repeated or listed, narrows it as on the holder.
        for query in ["?service=180d", "?service=180d,180f", "?service=180d&service=180f"] {
            let narrowed = try await a.get(device + "/services" + query, headers: Self.auth)
            let direct = try await b.get("/v1/devices/\(Self.browsed)/services" + query, headers: Self.auth)
            #expect(narrowed.status == 200 && narrowed.text == direct.text, "\(query): \(narrowed.text)")
        }
        let narrowed = try await a.get(device + "/services?service=180d", headers: Self.auth)
        #expect(narrowed.array.count == 1, "\(narrowed.text)")
        let badService = try await a.get(device + "/services?service=nope", headers: Self.auth)
        #expect(badService.status == 400 && badService.headers["gateway"] == nil, "\(badService)")

        // One characteristic, with its descriptors.
        let characteristic = try await a.get(device + "/characteristics/2a19", headers: Self.auth)
        let localCharacteristic = try await b.get("/v1/devices/\(Self.browsed)/characteristics/2a19", headers: Self.auth)
        #expect(characteristic.status == 200 && characteristic.headers["gateway"] == "g-b", "\(characteristic)")
        #expect(characteristic.text == localCharacteristic.text, "\(characteristic.text)")
        let descriptors = (characteristic.object["descriptors"] as? [[String: Any]] ?? []).compactMap { $0["uuid"] as? String }
        #expect(descriptors.contains("00002901-0000-1000-8000-00805f9b34fb"), "\(descriptors)")

        // Descriptors: read (in the encoding asked) and write. (The
        // simulator acknowledges a descriptor write without keeping the
        // value: what shows the write reached the descriptor is its
        // acknowledgement here and the refusal of a read-only one below.)
        let descriptor = device + "/characteristics/2a19/descriptors"
        let text = try await a.get(descriptor + "/2901/value?encoding=utf8", headers: Self.auth)
        #expect(text.status == 200 && text.headers["gateway"] == "g-b", "\(text)")
        #expect(text.object["value"] as? String == "Battery" && text.object["encoding"] as? String == "utf8", "\(text)")
        let custom = descriptor + "/0000ff10-0000-1000-8000-00805f9b34fb/value"
        #expect(try await a.get(custom, headers: Self.auth).object["value"] as? String == "0102")
        let written = try await a.request("PUT", custom, json: #"{"value":"AwQ=","encoding":"base64"}"#, headers: Self.auth)
        #expect(written.status == 204 && written.headers["gateway"] == "g-b", "\(written)")
        // By handle, as Bleak names them: the holder's handles.
        let handles = (characteristic.object["descriptors"] as? [[String: Any]] ?? []).compactMap { $0["handle"] as? Int }
        let charHandle = characteristic.object["handle"] as? Int ?? 0
        if let last = handles.last {
            let byHandle = try await a.get(
                "\(device)/characteristics/handle:\(charHandle)/descriptors/handle:\(last)/value", headers: Self.auth)
            #expect(byHandle.status == 200 && byHandle.object["value"] as? String == "0102", "\(byHandle)")
        } else {
            Issue.record("no descriptor handles: \(characteristic.text)")
        }

        // Problems are the holder's: an unknown descriptor (404), a
        // read-only one written (403), the peripheral's refusal (502).
        let unknown = try await a.get(descriptor + "/2904/value", headers: Self.auth)
        #expect(unknown.status == 404 && unknown.headers["gateway"] == "g-b", "\(unknown)")
        #expect(unknown.contentType == "application/problem+json", "\(unknown)")
        let readOnly = try await a.request("PUT", descriptor + "/2901/value", json: #"{"value":"00"}"#, headers: Self.auth)
        let readOnlyHere = try await b.request(
            "PUT", "/v1/devices/\(Self.browsed)/characteristics/2a19/descriptors/2901/value", json: #"{"value":"00"}"#,
            headers: Self.auth)
        #expect(readOnly.status == readOnlyHere.status && (400..<500).contains(readOnly.status), "\(readOnly)")
        #expect(readOnly.headers["gateway"] == "g-b", "\(readOnly)")
        let refused = try await a.request(
            "PUT", device + "/characteristics/2a39/value", json: #"{"value":"02"}"#, headers: Self.auth)
        #expect(refused.status == 502 && refused.headers["gateway"] == "g-b", "\(refused)")
        #expect(refused.object["att_error"] as? Int == 0x80, "\(refused)")
        // `?pair=auto` reaches the holder: an encrypted characteristic of a
        // device that refuses to pair is not-paired without it, and with it
        // the holder tries to pair and says why it could not.
        let secret = device + "/characteristics/0000ff03-0000-1000-8000-00805f9b34fb/value"
        let plain = try await a.get(secret, headers: Self.auth)
        #expect(plain.status == 403 && plain.object["type"] as? String == "urn:blegateway:problem:not-paired", "\(plain)")
        let paired = try await a.get(secret + "?pair=auto&timeout_ms=20000", headers: Self.auth)
        #expect(paired.status == 403 && paired.headers["gateway"] == "g-b", "\(paired)")
        #expect(paired.object["type"] as? String == "urn:blegateway:problem:authentication-failed", "\(paired)")
        let pairedWrite = try await a.request(
            "PUT", secret + "?pair=auto&timeout_ms=20000", json: #"{"value":"01"}"#, headers: Self.auth)
        #expect(pairedWrite.object["type"] as? String == "urn:blegateway:problem:authentication-failed", "\(pairedWrite)")
        // The request's own mistakes are this gateway's 400s.
        let badPair = try await a.get(secret + "?pair=always", headers: Self.auth)
        #expect(badPair.status == 400 && badPair.headers["gateway"] == nil, "\(badPair)")
        let badDescriptor = try await a.get(descriptor + "/zz/value", headers: Self.auth)
        #expect(badDescriptor.status == 400 && badDescriptor.headers["gateway"] == nil, "\(badDescriptor)")
        let typed = try await a.request("PUT", custom, json: #"{"value":"00","type":"command"}"#, headers: Self.auth)
        #expect(typed.status == 400 && typed.headers["gateway"] == nil, "\(typed)")

        let disconnect = try await a.request("POST", device + "/disconnect", headers: Self.auth)
        #expect(disconnect.status == 200 && disconnect.headers["gateway"] == "g-b", "\(disconnect)")
        scan.close()
        #expect(await a.stop() == 0, "\(a.process.standardError.suffix(2000))")
        #expect(await b.stop() == 0, "\(b.process.standardError.suffix(2000))")
        await broker.stop()
    }

    @Test func aCommandNobodyTakesIsA504AndAGatewayOutsideAFleetSays404() async throws {
        let broker = try await Broker.start()
        // In the fleet, but taking no commands: nobody claims its requests.
        let lone = try await GatewayUnderTest.start(
            scenario: Self.scenario(adapter: 2, devices: [Self.device(Self.shared, rssi: -50, battery: "3c")]),
            arguments: ["--mqtt", broker.url, "--gateway-id", "g-lone"])
        let (joined, _) = await Self.poll(timeout: .seconds(30)) {
            try await lone.get("/v1/fleet/gateways").array
        } until: { $0.first?["online"] as? Bool == true }
        #expect(joined)
        let started = ContinuousClock.now
        let timedOut = try await lone.request("POST", "/v1/fleet/devices/\(Self.shared)/connect?timeout_ms=500")
        let waited = ContinuousClock.now - started
        #expect(timedOut.status == 504 && timedOut.contentType == "application/problem+json", "\(timedOut)")
        #expect(timedOut.object["type"] as? String == "urn:blegateway:problem:timeout", "\(timedOut)")
        #expect(waited >= .seconds(5) && waited < .seconds(30), "\(waited)")
        #expect(await lone.stop() == 0)
        await broker.stop()

        let alone = try await GatewayUnderTest.start()
        let outside = try await alone.get("/v1/fleet/gateways")
        #expect(outside.status == 404 && outside.contentType == "application/problem+json", "\(outside)")
        #expect(outside.text.contains("--mqtt"), "\(outside)")
        #expect(await alone.stop() == 0)
    }

    /// Fetches until `condition` holds or `timeout` passes; whether it held,
    /// and the last value fetched.
    static func poll<T>(
        timeout: Duration, _ fetch: () async throws -> T, until condition: (T) -> Bool
    ) async -> (Bool, T?) {
        let deadline = ContinuousClock.now + timeout
        var last: T?
        while ContinuousClock.now < deadline {
            last = try? await fetch()
            if let last, condition(last) { return (true, last) }
            try? await Task.sleep(for: .milliseconds(250))
        }
        return (false, last)
    }

    static func entry(_ address: String, in devices: [[String: Any]]) -> [String: Any]? {
        devices.first { $0["address"] as? String == address }
    }
}
