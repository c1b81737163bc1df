"""The simulator scenario the notification-rate scripts share: one device
whose characteristic notifies a little-endian counter at a given rate, so a
receiver can count what it lost."""

DEVICE = "C4:7C:8D:6A:3E:01"
UUID = "0000ff01-0000-1000-8000-00805f9b34fb"


def scenario(rate):
    return f"""
timing: 0.01
devices:
  - address: "{DEVICE}"
    name: Counter
    advertising: {{ interval: 0.05 }}
    connection: {{ delay: 1, resolveDelay: 1 }}
    services:
      - uuid: "ff00"
        characteristics:
          - uuid: "{UUID}"
            flags: [read, notify]
            behaviour: {{ kind: counter, start: 0, step: 1, size: 4, rate: {rate} }}
"""
