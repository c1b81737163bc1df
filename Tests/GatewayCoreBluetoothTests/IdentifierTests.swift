import Foundation
import Testing

@testable import GatewayCoreBluetooth

@Suite struct IdentifierTests {
    let gateway = URL(string: "http://gateway.local:8080")!

    @Test func stableForTheSameGatewayAndAddress() {
        let one = CBPeer.identifier(gateway: gateway, address: "C4:7C:8D:6A:3E:01")
        #expect(one == CBPeer.identifier(gateway: URL(string: "HTTP://GATEWAY.LOCAL:8080")!, address: "c4:7c:8d:6a:3e:01"))
        #expect(one != CBPeer.identifier(gateway: gateway, address: "C4:7C:8D:6A:3E:02"))
        #expect(one != CBPeer.identifier(gateway: URL(string: "http://other:8080")!, address: "C4:7C:8D:6A:3E:01"))
        // A version 8 (RFC 9562) UUID of the RFC variant.
        let text = one.uuidString
        #expect(Array(text)[14] == "8")
        #expect("89AB".contains(Array(text)[19]))
    }

    @Test func advertisementDataIsCoreBluetoothsDictionary() throws {
        let json = """
            {"address":"C4:7C:8D:6A:3E:01","adapter":"hci0","name":"Strap","rssi":-58,"tx_power":4,
             "service_uuids":["0000180d-0000-1000-8000-00805f9b34fb"],
             "manufacturer_data":{"0x006b":{"company_id":107,"value":"3f00","encoding":"hex"}},
             "service_data":{"0000180d-0000-1000-8000-00805f9b34fb":{"uuid":"0000180d-0000-1000-8000-00805f9b34fb","value":"0102","encoding":"hex"}},
             "connected":false,"paired":false,"services_resolved":false}
            """
        let device = try JSONDecoder.gateway.decode(GatewayJSON.Device.self, from: Data(json.utf8))
        let data = CBCentralManager.advertisementData(device)
        #expect(data[CBAdvertisementDataLocalNameKey] as? String == "Strap")
        #expect(data[CBAdvertisementDataServiceUUIDsKey] as? [CBUUID] == [CBUUID(string: "180D")])
        #expect(data[CBAdvertisementDataManufacturerDataKey] as? Data == Data([0x6b, 0x00, 0x3f, 0x00]))
        #expect((data[CBAdvertisementDataServiceDataKey] as? [CBUUID: Data])?[CBUUID(string: "180D")] == Data([1, 2]))
        #expect((data[CBAdvertisementDataTxPowerLevelKey] as? NSNumber)?.intValue == 4)
    }

    @Test func gatewayProblemsBecomeCoreBluetoothErrors() {
        var refused = GatewayError(detail: "Operation failed with ATT error: 0x80")
        refused.status = 502
        refused.attError = 0x80
        #expect((CBError.from(refused) as? CBATTError)?.rawCode == 0x80)
        var notConnected = GatewayError(detail: "not connected")
        notConnected.status = 409
        notConnected.type = "urn:blegateway:problem:not-connected"
        #expect((CBError.from(notConnected) as? CBError)?.code == .notConnected)
    }
}
