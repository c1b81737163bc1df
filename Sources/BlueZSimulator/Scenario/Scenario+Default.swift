extension Scenario {
    /// The built-in demo: one adapter and eight realistic peripherals (a
    /// heart-rate strap, a thermometer, a smart plug, an iBeacon, three
    /// Eddystone beacons (URL, TLM and UID) and a BTHome v2 sensor), their
    /// advertisements in the published frame formats.
    /// `bluez-sim --print-default-scenario` prints its YAML.
    public static var `default`: Scenario {
        // The text is part of the program and a test parses it; should it
        // ever fail, an empty world is still a valid simulator.
        (try? parse(defaultYAML)) ?? Scenario()
    }

    /// The YAML of `Scenario.default`, a starting point for new scenarios.
    public static let defaultYAML = """
        # bluez-sim default scenario (see docs/scenarios.md)
        timing: 1            # realistic latencies; 0.01 for fast tests
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:13"
            name: blegateway
        devices:
          # A chest strap: Heart Rate (notifies about once a second),
          # Battery (drains), Device Information.
          - address: "C4:7C:8D:6A:3E:01"
            addressType: random
            name: Polar H10 6A3E01
            appearance: 0x0341          # Heart Rate Sensor: Heart Rate Belt
            rssi: -58
            rssiJitter: 6
            txPower: 4
            advertising:
              interval: 0.5
              uuids: ["180d"]
              manufacturerData: { 0x006b: "3f00" }
            services:
              - uuid: "180d"
                characteristics:
                  - uuid: "2a37"        # Heart Rate Measurement
                    flags: [notify]
                    behaviour: { kind: heart-rate, bpm: 72, variation: 6, rate: 1 }
                  - uuid: "2a38"        # Body Sensor Location: chest
                    flags: [read]
                    value: "01"
                  - uuid: "2a39"        # Heart Rate Control Point: 01 resets energy expended
                    flags: [write]
                    behaviour: { kind: control-point, accept: ["01"], error: 0x80 }
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"        # Battery Level
                    flags: [read, notify]
                    behaviour: { kind: battery, level: 87, drain: 1, every: 60 }
              - uuid: "180a"
                characteristics:
                  - uuid: "2a29"
                    flags: [read]
                    text: Polar Electro Oy
                  - uuid: "2a24"
                    flags: [read]
                    text: H10

          # A thermometer: Health Thermometer with indications.
          - address: "A4:C1:38:2F:1B:07"
            addressType: public
            name: Thermo 1B07
            appearance: 0x0300          # Generic Thermometer
            rssi: -71
            rssiJitter: 4
            advertising:
              interval: 1.0
              uuids: ["1809"]
              serviceData: { "1809": "fe0a0000" }
            services:
              - uuid: "1809"
                characteristics:
                  - uuid: "2a1c"        # Temperature Measurement
                    flags: [indicate]
                    behaviour: { kind: thermometer, celsius: 21.5, variation: 0.3, rate: 0.5 }
                  - uuid: "2a1d"        # Temperature Type: body (general)
                    flags: [read]
                    value: "01"
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read, notify]
                    behaviour: { kind: battery, level: 64, drain: 1, every: 120 }

          # A smart plug: a switch to write and read back, a power counter,
          # and a setting that needs pairing.
          - address: "D0:73:D5:22:41:9C"
            addressType: public
            name: Smart Plug 419C
            rssi: -49
            rssiJitter: 3
            txPower: 0
            advertising:
              interval: 0.2
              uuids: ["0000ff00-0000-1000-8000-00805f9b34fb"]
            # Shows 123456 to type in (asked only of an agent with a
            # keyboard: the default NoInputNoOutput pairs by Just Works).
            pairing: { ioCapability: DisplayOnly, passkey: 123456 }
            services:
              - uuid: "0000ff00-0000-1000-8000-00805f9b34fb"
                characteristics:
                  - uuid: "0000ff01-0000-1000-8000-00805f9b34fb"   # relay: 00 off, 01 on
                    flags: [read, write, notify]
                    value: "00"
                    behaviour: echo
                    descriptors:
                      - uuid: "2901"
                        text: Relay
                  - uuid: "0000ff02-0000-1000-8000-00805f9b34fb"   # energy, Wh, uint32 LE
                    flags: [read, notify]
                    behaviour: { kind: counter, start: 1200, step: 1, size: 4, rate: 0.2 }
                  - uuid: "0000ff03-0000-1000-8000-00805f9b34fb"   # schedule, needs pairing
                    flags: [read, write]
                    value: "0000"
                    behaviour: echo
                    encrypted: true

          # A beacon: advertises only, with a sequence number in its
          # manufacturer data; not connectable.
          - address: "F1:E2:D3:C4:B5:A6"
            addressType: random
            rssi: -77
            rssiJitter: 8
            txPower: -12
            advertising:
              interval: 1.0
              connectable: false
              flags: "04"
              counter: true
              manufacturerData: { 0x004c: "0215e2c56db5dffb48d2b060d0f5a71096e000010002c500" }

          # An Eddystone-URL beacon (frame 0x10: TX power -21 dBm at 0 m,
          # scheme 03 "https://", "google", 07 ".com"), which also carries
          # the URI AD type (0x24, scheme 0x17 "https:"): bluetoothd keeps
          # that one raw in AdvertisingData.
          - address: "E7:1D:5A:3C:90:11"
            addressType: random
            rssi: -69
            rssiJitter: 5
            advertising:
              interval: 1.0
              connectable: false
              flags: "06"
              uuids: ["feaa"]
              serviceData: { "feaa": "10eb03676f6f676c6507" }
              data: { 0x24: "172f2f676f6f676c652e636f6d" }

          # An Eddystone-TLM frame (version 0: 3000 mV, 22.5 °C in 8.8
          # fixed point, 3600 advertisements, 900.0 s since power-on).
          - address: "E7:1D:5A:3C:90:12"
            addressType: random
            rssi: -72
            rssiJitter: 5
            advertising:
              interval: 1.0
              connectable: false
              flags: "06"
              uuids: ["feaa"]
              serviceData: { "feaa": "20000bb8168000000e1000002328" }

          # An Eddystone-UID beacon (frame 0x00: TX power -20 dBm at 0 m,
          # namespace 00112233445566778899, instance aabbccddeeff, two
          # reserved bytes).
          - address: "E7:1D:5A:3C:90:13"
            addressType: random
            rssi: -66
            rssiJitter: 5
            advertising:
              interval: 1.0
              connectable: false
              flags: "06"
              uuids: ["feaa"]
              serviceData: { "feaa": "00ec00112233445566778899aabbccddeeff0000" }

          # A BTHome v2 temperature/humidity sensor (bthome.io/format:
          # device info 40, battery 01 61 = 97 %, temperature 02 c409 =
          # 25.00 °C, humidity 03 bf13 = 50.55 %).
          - address: "A4:C1:38:8E:2F:55"
            addressType: public
            name: ATC_8E2F55
            rssi: -63
            rssiJitter: 4
            advertising:
              interval: 2.0
              connectable: false
              flags: "06"
              serviceData: { "fcd2": "40016102c40903bf13" }

        """
}
