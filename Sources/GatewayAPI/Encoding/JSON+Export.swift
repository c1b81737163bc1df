// The JSON value type lives in its own module, below the core, so that the
// core can write and read what it stores as JSON. GatewayAPI's encodings
// (`CommandJSON`, `ModelJSON`, `Problem`, `JSONField`) are made of it and
// are what the MQTT door and the tests use, so it comes with them.
@_exported import JSONValue
