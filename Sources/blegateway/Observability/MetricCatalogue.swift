/// Every metric the gateway exports, by name, with the help text `/metrics`
/// gives it (`# HELP`). The layers name their metrics where they record
/// them; this is the one list of what those names mean, kept in step with
/// README.md's table (`promtool check metrics` in the tests flags a name
/// missing here).
enum MetricCatalogue {
    static let help: [String: String] = [
        // HTTPServer
        "blegateway_http_requests_total":
            "HTTP requests answered, by method, route pattern (unmatched for none) and status.",
        "blegateway_http_request_duration_seconds":
            "Time from a request reaching the router to its response head, by method and route pattern.",
        // DBus
        "blegateway_dbus_call_duration_seconds": "D-Bus method calls by interface.member: time to the reply.",
        "blegateway_dbus_call_errors_total":
            "D-Bus method calls answered with an error (its name), timed out or cut off, by interface.member.",
        "blegateway_dbus_reconnect_attempts_total": "Attempts to connect to the bus again after losing it.",
        // BlueZ
        "blegateway_notifications_dropped_total":
            "Notification values dropped because the gateway fell more than 65,536 values behind on one subscription's socket.",
        // GatewayAPI
        "blegateway_devices_connected": "Devices bluetoothd reports connected.",
        "blegateway_devices_connected_by_gateway": "Connected devices that the gateway connected.",
        "blegateway_scan_sessions": "Discovery sessions open (scan streams and timed scans).",
        "blegateway_subscriptions": "Characteristics subscribed to (notifications started), however many streams share each.",
        "blegateway_subscribers": "Streams sharing the subscribed characteristics.",
        "blegateway_open_streams": "Event streams open, by kind.",
        "blegateway_streams_dropped_total": "Streams dropped because their client read too slowly, by kind.",
        "blegateway_events_total": "Events published, by type.",
        "blegateway_characteristic_values_total":
            "Characteristic values received (notified, indicated or read), by device (the first 256 devices; later ones as other).",
        "blegateway_pairing_attempts_total": "Pairings through the API, and those bluetoothd made on its own, by outcome.",
        "blegateway_keeper_reconnect_attempts_total": "Reconnection attempts for kept devices.",
        "blegateway_keeper_reconnects_total": "Kept devices connected again after a loss.",
        "blegateway_keeper_given_up_total": "Kept devices the keeper gave up on.",
        // The executable's scrape-time readings
        "blegateway_build_info": "The gateway's version (always 1).",
        "blegateway_dbus_connected": "Whether the gateway's D-Bus connection is up (1) or lost (0).",
        "blegateway_bluez_available": "Whether bluetoothd owns org.bluez on the bus (1) or not (0).",
        "blegateway_adapter_powered": "Whether each adapter bluetoothd has is powered on (1) or off (0).",
        "blegateway_adapter_connection_slots_used":
            "Connection slots in use on each adapter: its connected devices and the connections being made through it.",
        "blegateway_adapter_connection_slots_free": "Connection slots left on each adapter (its limit, --connection-slots, less those used).",
        "blegateway_adapter_queued_connections": "Connections waiting for a free slot that each adapter could serve.",
        "blegateway_mqtt_connected": "Whether the MQTT bridge is connected to its broker (1) or not (0).",
        "blegateway_mqtt_queued_messages": "MQTT messages (QoS 1 and 2) waiting in the bridge's outbox.",
        "blegateway_mqtt_in_flight_messages": "MQTT messages (QoS 1 and 2) sent and not yet acknowledged.",
        "blegateway_mqtt_published_messages_total": "MQTT messages the bridge handed to its client library.",
        "blegateway_mqtt_dropped_messages_total":
            "MQTT messages dropped: from a full outbox, or QoS 0 while disconnected.",
        "blegateway_store_lag_events": "Events handed to the state store and not yet committed.",
        "blegateway_store_events": "Events kept in the state store's event log.",
        "blegateway_store_size_bytes": "Size of the state store's files (database and write-ahead log).",
        "blegateway_store_lost_events_total": "Events the state store could not keep (full queue or failed commit).",
        // Process (the names Prometheus's client libraries use)
        "process_cpu_seconds_total": "Total user and system CPU time spent in seconds.",
        "process_resident_memory_bytes": "Resident memory size in bytes.",
        "process_virtual_memory_bytes": "Virtual memory size in bytes.",
        "process_open_fds": "Number of open file descriptors.",
        "process_max_fds": "Maximum number of open file descriptors.",
        "process_start_time_seconds": "Start time of the process since the Unix epoch in seconds.",
    ]
}
