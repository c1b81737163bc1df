/// The world the gateway tests run in: fast timing, and a device for every
/// path through the API.
enum TestScenario {
    static let strap = "C4:7C:8D:6A:3E:01"
    static let slow = "D0:73:D5:22:41:9C"
    static let beacon = "F1:E2:D3:C4:B5:A6"
    static let relay = "0000ff01-0000-1000-8000-00805f9b34fb"
    static let secret = "0000ff03-0000-1000-8000-00805f9b34fb"
    static let writeOnly = "0000ff04-0000-1000-8000-00805f9b34fb"

    static let yaml = """
        timing: 0.01
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:13"
            name: test-gateway
        devices:
          # Everything a GATT client can meet, on one device.
          - address: "\(strap)"
            addressType: random
            name: Strap 3E01
            rssi: -58
            advertising:
              interval: 0.05
              uuids: ["180d"]
              manufacturerData: { 0x006b: "3f00" }
              serviceData: { "180d": "0102" }
            services:
              - uuid: "180d"
                characteristics:
                  - uuid: "2a37"
                    flags: [notify]
                    behaviour: { kind: heart-rate, bpm: 72, variation: 6, rate: 20 }
                  - uuid: "2a38"
                    flags: [read]
                    value: "01"
                  - uuid: "2a39"
                    flags: [write]
                    behaviour: { kind: control-point, accept: ["01"], error: 0x80 }
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read, notify]
                    value: "57"
              # A second battery: "2a19" alone is ambiguous.
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read]
                    value: "21"
              - uuid: "0000ff00-0000-1000-8000-00805f9b34fb"
                characteristics:
                  - uuid: "\(relay)"
                    flags: [read, write, write-without-response, notify]
                    value: "00"
                    behaviour: echo
                    descriptors:
                      - uuid: "2901"
                        text: Relay
                  - uuid: "\(secret)"
                    flags: [read, write]
                    value: "0000"
                    behaviour: echo
                    encrypted: true
                  - uuid: "\(writeOnly)"
                    flags: [write]
            pairing:
              accept: false
          # A device that takes ten seconds to connect.
          - address: "\(slow)"
            addressType: public
            name: Slowpoke
            rssi: -70
            advertising:
              interval: 0.05
              uuids: ["ff00"]
            connection:
              delay: 1000
          # A beacon: advertises, cannot be connected.
          - address: "\(beacon)"
            addressType: random
            rssi: -77
            advertising:
              interval: 0.05
              connectable: false
              manufacturerData: { 0x004c: "0215e2c56db5dffb48d2b060d0f5a71096e000010002c500" }
        """
}
