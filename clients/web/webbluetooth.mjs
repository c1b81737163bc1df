// blegateway Web Bluetooth: `navigator.bluetooth` for any browser, backed by a
// blegateway's HTTP API (REST for operations, Server-Sent Events read through
// fetch for scans, notifications and disconnections).
//
// This file is the ES module; webbluetooth.js is the classic-script build of
// the same code (scripts/embed-webbluetooth.sh writes it). Both install
// `navigator.bluetooth` when the browser has none, or always when their
// script tag carries `data-force`, and talk to the gateway they were loaded
// from, to `data-gateway` (with `data-api-key`), or to the one given to
// `blegateway.configure({gateway, apiKey})`. With `data-fleet` (or
// `configure({fleet: true})`) they reach every device the gateway's fleet
// hears, through the gateway's /v1/fleet/ routes (docs/fleet.md): the
// chooser lists what any gateway of the fleet hears, and each operation goes
// to the gateway that has the device.
//
// Semantics follow the Web Bluetooth specification
// (https://webbluetoothcg.github.io/web-bluetooth/): filter validation and
// matching, allowed services, GATT names, and the DOMException names it maps
// errors to. Where it departs: requestDevice needs no user gesture, and of
// the GATT blocklist only writes to the CCC descriptor are refused (the
// gateway's own key and CORS settings decide who may do what). Text from the
// radio is shown only through textContent.

const ownScript = findScript(import.meta.url);

const version = "1";

// The gateway sends a comment heartbeat every 15 s on every stream; a stream
// silent for four of them is taken as a dropped connection.
const streamSilenceLimitMs = 60000;
// The spec's upper bound for a value written to an attribute.
const maxValueLength = 512;
// The spec's upper bound for a device name or name prefix, in UTF-8 bytes.
const maxNameLength = 248;

// ---------------------------------------------------------------------------
// Which gateway, with which key

const settings = initialSettings();

function findScript(url) {
  for (const script of document.querySelectorAll("script[src]")) {
    if (script.src === url) return script;
  }
  return null;
}

function initialSettings() {
  const attribute = (name) => (ownScript && ownScript.hasAttribute(name) ? ownScript.getAttribute(name) : null);
  const loadedFrom = ownScript && ownScript.src ? ownScript.src : location.href;
  const gateway = attribute("data-gateway");
  return {
    base: gatewayBase(gateway === null ? new URL(".", loadedFrom).href : gateway),
    apiKey: attribute("data-api-key"),
    force: attribute("data-force") !== null,
    fleet: attribute("data-fleet") !== null,
  };
}

// The gateway's base URL, ending with `/` so API paths resolve under it.
function gatewayBase(text) {
  let url;
  try {
    url = new URL(text, location.href);
  } catch {
    throw new TypeError(`blegateway: '${text}' is not a gateway URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`blegateway: the gateway URL must be http or https, not '${url.protocol}'`);
  }
  url.search = "";
  url.hash = "";
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url.href;
}

// The key to send: the one configured, else (for a page the gateway serves
// itself) the one the gateway's web console keeps in this tab's
// sessionStorage (the console never stores it for longer).
function apiKey() {
  if (settings.apiKey !== null) return settings.apiKey;
  if (new URL(settings.base).origin === location.origin) {
    try {
      return sessionStorage.getItem("blegateway.apiKey") || "";
    } catch {
      return "";
    }
  }
  return "";
}

// Points the script at another gateway, gives it the API key (null: none
// given, as without data-api-key), or sends it through the gateway's fleet.
function configure(options = {}) {
  if (typeof options !== "object" || options === null) throw new TypeError("configure() takes {gateway, apiKey, fleet}");
  if (options.fleet !== undefined && typeof options.fleet !== "boolean") {
    throw new TypeError("configure({fleet}) takes true or false");
  }
  if (options.gateway !== undefined) settings.base = gatewayBase(String(options.gateway));
  if (options.apiKey !== undefined) settings.apiKey = options.apiKey === null ? null : String(options.apiKey);
  if (options.fleet !== undefined) settings.fleet = options.fleet;
}

// Where devices are: this gateway's, or the whole fleet's through it. Grants
// and device objects are kept apart for the two.
function devicesPath() {
  return settings.fleet ? "v1/fleet/devices" : "v1/devices";
}

function scope() {
  return settings.fleet ? `${settings.base} fleet` : settings.base;
}

// ---------------------------------------------------------------------------
// Errors: the gateway's problems as the DOMExceptions the spec names

// The spec's table for ATT error codes ("Error handling" in the GATT
// interaction section); codes it does not list are NotSupportedError.
const attErrorNames = {
  0x01: "InvalidStateError", // Invalid Handle
  0x02: "NotSupportedError", // Read Not Permitted
  0x03: "NotSupportedError", // Write Not Permitted
  0x04: "NotSupportedError", // Invalid PDU
  0x05: "SecurityError", // Insufficient Authentication
  0x06: "NotSupportedError", // Request Not Supported
  0x07: "InvalidModificationError", // Invalid Offset
  0x08: "SecurityError", // Insufficient Authorization
  0x09: "InvalidStateError", // Prepare Queue Full
  0x0a: "InvalidStateError", // Attribute Not Found
  0x0b: "InvalidModificationError", // Attribute Not Long
  0x0c: "SecurityError", // Insufficient Encryption Key Size
  0x0d: "InvalidModificationError", // Invalid Attribute Value Length
  0x0e: "NotSupportedError", // Unlikely Error
  0x0f: "SecurityError", // Insufficient Encryption
  0x10: "InvalidStateError", // Unsupported Group Type
  0x11: "NotSupportedError", // Insufficient Resources
};

// The gateway's problem types (`urn:blegateway:problem:<name>`).
const problemNames = {
  "not-connected": "NetworkError",
  "not-found": "NotFoundError",
  "not-authorized": "SecurityError",
  "not-permitted": "NotSupportedError",
  "not-supported": "NotSupportedError",
  "in-progress": "InvalidStateError",
  ambiguous: "InvalidStateError",
  timeout: "NetworkError",
  "peripheral-failed": "NetworkError",
  "bluetooth-failed": "NetworkError",
  "adapter-unavailable": "NetworkError",
  "bluetoothd-unavailable": "NetworkError",
  unavailable: "NetworkError",
  unauthorized: "SecurityError",
};

// What a failed response means, as a DOMException. A refused write's bad
// input (a value too long for the MTU) is InvalidModificationError, as the
// spec maps Invalid Attribute Value Length.
async function problemException(response, writing) {
  let problem = {};
  try {
    problem = await response.json();
  } catch {
    problem = {};
  }
  const type = typeof problem.type === "string" ? problem.type.replace(/^urn:blegateway:problem:/, "") : "";
  const detail = typeof problem.detail === "string" ? problem.detail : response.statusText;
  let name = problemNames[type] || (response.status >= 500 ? "NetworkError" : "NotSupportedError");
  if (Number.isInteger(problem.att_error)) name = attErrorNames[problem.att_error] || "NotSupportedError";
  else if (writing && (response.status === 400 || response.status === 413)) name = "InvalidModificationError";
  if (response.status === 401) {
    console.error(
      `blegateway: the gateway at ${settings.base} refused the API key (${detail}). ` +
        `Give the key with data-api-key="…" on the script tag or blegateway.configure({apiKey: "…"}).`,
    );
  }
  return new DOMException(`${detail} (${type || response.status})`, name);
}

const reportedOrigins = new Set();

// Why a request failed before any response: the gateway is unreachable, or
// (when it still answers a no-cors request) it does not allow this page's
// origin, which needs `--cors-origin` on the gateway.
async function unreachableException(base) {
  const gatewayOrigin = new URL(base).origin;
  if (gatewayOrigin !== location.origin) {
    let answers = false;
    try {
      await fetch(new URL("health", base), { mode: "no-cors", cache: "no-store" });
      answers = true;
    } catch {
      answers = false;
    }
    if (answers) {
      const origin = location.origin;
      const message =
        `blegateway: the gateway at ${gatewayOrigin} does not allow pages from ${origin}. ` +
        `Start it with --cors-origin ${origin} (or set BLEGATEWAY_CORS_ORIGINS).`;
      if (!reportedOrigins.has(gatewayOrigin)) {
        reportedOrigins.add(gatewayOrigin);
        console.error(message);
      }
      return new DOMException(message, "SecurityError");
    }
  }
  return new DOMException(`blegateway: the gateway at ${base} cannot be reached`, "NetworkError");
}

// One call to the gateway's API; resolves to the Response when it is a
// success and rejects with a DOMException otherwise.
async function call(method, path, { query = {}, body, json, accept = "application/json", signal, writing = false } = {}) {
  const base = settings.base;
  const url = new URL(path, base);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const headers = { Accept: accept };
  const key = apiKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (json !== undefined) {
    body = JSON.stringify(json);
    headers["Content-Type"] = "application/json";
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/octet-stream";
  }
  let response;
  try {
    response = await fetch(url, { method, headers, body, signal, cache: "no-store" });
  } catch (error) {
    if (signal && signal.aborted) throw new DOMException("aborted", "AbortError");
    throw await unreachableException(base);
  }
  if (!response.ok) throw await problemException(response, writing);
  return response;
}

async function callJSON(method, path, options) {
  const response = await call(method, path, options);
  return response.status === 204 ? null : response.json();
}

// An attribute's value: raw bytes from this gateway; through the fleet, the
// holder's JSON answer (hex), which is what the broker carries.
async function readBytes(path) {
  if (settings.fleet) {
    const answer = await callJSON("GET", path, { query: { encoding: "hex" } });
    return hexBytes(answer && answer.value);
  }
  const response = await call("GET", path, { accept: "application/octet-stream" });
  return new Uint8Array(await response.arrayBuffer());
}

async function writeBytes(path, bytes, query = {}) {
  if (settings.fleet) {
    await call("PUT", path, { json: { value: hexString(bytes), encoding: "hex", ...query }, writing: true });
  } else {
    await call("PUT", path, { query, body: bytes, writing: true });
  }
}

// ---------------------------------------------------------------------------
// Event streams (text/event-stream read through fetch, so that the key goes
// in a header, a refusal comes with its problem, and a drop is seen)

// Opens a stream; `ready` settles when the gateway answers (rejecting with
// its problem), `ended` resolves with "closed" (close() was called),
// "finished" (the gateway ended it) or "dropped" (the connection broke or
// fell silent).
function openStream(path, query, onEvent) {
  const controller = new AbortController();
  let closing = false;
  let silent = false;
  const ready = call("GET", path, { query, accept: "text/event-stream", signal: controller.signal });
  const ended = ready.then(
    async (response) => {
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let event = "message";
      let data = [];
      let timer = 0;
      const armWatchdog = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          silent = true;
          controller.abort();
        }, streamSilenceLimitMs);
      };
      try {
        for (;;) {
          armWatchdog();
          const { value, done } = await reader.read();
          if (done) return closing ? "closed" : "finished";
          buffer += decoder.decode(value, { stream: true });
          let newline;
          while ((newline = buffer.indexOf("\n")) >= 0) {
            // A listener may have closed the stream: nothing more for it.
            if (closing) return "closed";
            const line = buffer.slice(0, newline).replace(/\r$/, "");
            buffer = buffer.slice(newline + 1);
            if (line === "") {
              if (data.length > 0) dispatchStreamEvent(onEvent, event, data.join("\n"));
              event = "message";
              data = [];
            } else if (line.startsWith("event:")) {
              event = line.slice(6).trim();
            } else if (line.startsWith("data:")) {
              data.push(line.slice(5).replace(/^ /, ""));
            }
          }
        }
      } catch {
        return closing && !silent ? "closed" : "dropped";
      } finally {
        clearTimeout(timer);
      }
    },
    () => (closing ? "closed" : "refused"),
  );
  return {
    ready,
    ended,
    close() {
      closing = true;
      controller.abort();
    },
  };
}

function dispatchStreamEvent(onEvent, event, text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return;
  }
  try {
    onEvent(event, data);
  } catch (error) {
    // A page's event listener threw: report it, keep the stream.
    setTimeout(() => {
      throw error;
    });
  }
}

// ---------------------------------------------------------------------------
// Bytes

function hexBytes(hex) {
  const text = typeof hex === "string" ? hex : "";
  const bytes = new Uint8Array(text.length >> 1);
  for (let index = 0; index < bytes.length; index += 1) {
    bytes[index] = parseInt(text.substr(index * 2, 2), 16);
  }
  return bytes;
}

function hexString(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function dataView(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// A copy of a BufferSource's bytes (the spec copies before the call).
function bufferSourceBytes(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  }
  throw new TypeError("The value must be an ArrayBuffer or an ArrayBufferView (BufferSource)");
}

function utf8Length(text) {
  return new TextEncoder().encode(text).length;
}

// ---------------------------------------------------------------------------
// BluetoothUUID and the spec's GATT names
// (https://github.com/WebBluetoothCG/registries: gatt_assigned_*.txt)

function nameTable(text) {
  const table = new Map();
  for (const entry of text.trim().split(/\s+/)) {
    const [name, alias] = entry.split(":");
    table.set(name, parseInt(alias, 16));
  }
  return table;
}

const serviceNames = nameTable(
  "generic_access:1800 generic_attribute:1801 immediate_alert:1802 link_loss:1803 tx_power:1804 " +
    "current_time:1805 reference_time_update:1806 next_dst_change:1807 glucose:1808 " +
    "health_thermometer:1809 device_information:180a heart_rate:180d phone_alert_status:180e " +
    "battery_service:180f blood_pressure:1810 alert_notification:1811 human_interface_device:1812 " +
    "scan_parameters:1813 running_speed_and_cadence:1814 automation_io:1815 " +
    "cycling_speed_and_cadence:1816 cycling_power:1818 location_and_navigation:1819 " +
    "environmental_sensing:181a body_composition:181b user_data:181c weight_scale:181d " +
    "bond_management:181e continuous_glucose_monitoring:181f internet_protocol_support:1820 " +
    "indoor_positioning:1821 pulse_oximeter:1822 http_proxy:1823 transport_discovery:1824 " +
    "object_transfer:1825 fitness_machine:1826 mesh_provisioning:1827 mesh_proxy:1828 " +
    "reconnection_configuration:1829",
);

const characteristicNames = nameTable(
  "gap.device_name:2a00 gap.appearance:2a01 gap.peripheral_privacy_flag:2a02 " +
    "gap.reconnection_address:2a03 gap.peripheral_preferred_connection_parameters:2a04 " +
    "gatt.service_changed:2a05 alert_level:2a06 tx_power_level:2a07 date_time:2a08 day_of_week:2a09 " +
    "day_date_time:2a0a exact_time_100:2a0b exact_time_256:2a0c dst_offset:2a0d time_zone:2a0e " +
    "local_time_information:2a0f secondary_time_zone:2a10 time_with_dst:2a11 time_accuracy:2a12 " +
    "time_source:2a13 reference_time_information:2a14 time_broadcast:2a15 " +
    "time_update_control_point:2a16 time_update_state:2a17 glucose_measurement:2a18 " +
    "battery_level:2a19 battery_power_state:2a1a battery_level_state:2a1b " +
    "temperature_measurement:2a1c temperature_type:2a1d intermediate_temperature:2a1e " +
    "temperature_celsius:2a1f temperature_fahrenheit:2a20 measurement_interval:2a21 " +
    "boot_keyboard_input_report:2a22 system_id:2a23 model_number_string:2a24 " +
    "serial_number_string:2a25 firmware_revision_string:2a26 hardware_revision_string:2a27 " +
    "software_revision_string:2a28 manufacturer_name_string:2a29 " +
    "ieee_11073-20601_regulatory_certification_data_list:2a2a current_time:2a2b " +
    "magnetic_declination:2a2c position_2d:2a2f position_3d:2a30 scan_refresh:2a31 " +
    "boot_keyboard_output_report:2a32 boot_mouse_input_report:2a33 glucose_measurement_context:2a34 " +
    "blood_pressure_measurement:2a35 intermediate_cuff_pressure:2a36 heart_rate_measurement:2a37 " +
    "body_sensor_location:2a38 heart_rate_control_point:2a39 removable:2a3a service_required:2a3b " +
    "scientific_temperature_celsius:2a3c string:2a3d network_availability:2a3e alert_status:2a3f " +
    "ringer_control_point:2a40 ringer_setting:2a41 alert_category_id_bit_mask:2a42 " +
    "alert_category_id:2a43 alert_notification_control_point:2a44 unread_alert_status:2a45 " +
    "new_alert:2a46 supported_new_alert_category:2a47 supported_unread_alert_category:2a48 " +
    "blood_pressure_feature:2a49 hid_information:2a4a report_map:2a4b hid_control_point:2a4c " +
    "report:2a4d protocol_mode:2a4e scan_interval_window:2a4f pnp_id:2a50 glucose_feature:2a51 " +
    "record_access_control_point:2a52 rsc_measurement:2a53 rsc_feature:2a54 sc_control_point:2a55 " +
    "digital:2a56 digital_output:2a57 analog:2a58 analog_output:2a59 aggregate:2a5a " +
    "csc_measurement:2a5b csc_feature:2a5c sensor_location:2a5d plx_spot_check_measurement:2a5e " +
    "plx_continuous_measurement:2a5f plx_features:2a60 pulse_oximetry_control_point:2a62 " +
    "cycling_power_measurement:2a63 cycling_power_vector:2a64 cycling_power_feature:2a65 " +
    "cycling_power_control_point:2a66 location_and_speed:2a67 navigation:2a68 position_quality:2a69 " +
    "ln_feature:2a6a ln_control_point:2a6b elevation:2a6c pressure:2a6d temperature:2a6e " +
    "humidity:2a6f true_wind_speed:2a70 true_wind_direction:2a71 apparent_wind_speed:2a72 " +
    "apparent_wind_direction:2a73 gust_factor:2a74 pollen_concentration:2a75 uv_index:2a76 " +
    "irradiance:2a77 rainfall:2a78 wind_chill:2a79 heat_index:2a7a dew_point:2a7b " +
    "descriptor_value_changed:2a7d aerobic_heart_rate_lower_limit:2a7e aerobic_threshold:2a7f " +
    "age:2a80 anaerobic_heart_rate_lower_limit:2a81 anaerobic_heart_rate_upper_limit:2a82 " +
    "anaerobic_threshold:2a83 aerobic_heart_rate_upper_limit:2a84 date_of_birth:2a85 " +
    "date_of_threshold_assessment:2a86 email_address:2a87 fat_burn_heart_rate_lower_limit:2a88 " +
    "fat_burn_heart_rate_upper_limit:2a89 first_name:2a8a five_zone_heart_rate_limits:2a8b " +
    "gender:2a8c heart_rate_max:2a8d height:2a8e hip_circumference:2a8f last_name:2a90 " +
    "maximum_recommended_heart_rate:2a91 resting_heart_rate:2a92 " +
    "sport_type_for_aerobic_and_anaerobic_thresholds:2a93 three_zone_heart_rate_limits:2a94 " +
    "two_zone_heart_rate_limit:2a95 vo2_max:2a96 waist_circumference:2a97 weight:2a98 " +
    "database_change_increment:2a99 user_index:2a9a body_composition_feature:2a9b " +
    "body_composition_measurement:2a9c weight_measurement:2a9d weight_scale_feature:2a9e " +
    "user_control_point:2a9f magnetic_flux_density_2D:2aa0 magnetic_flux_density_3D:2aa1 " +
    "language:2aa2 barometric_pressure_trend:2aa3 bond_management_control_point:2aa4 " +
    "bond_management_feature:2aa5 gap.central_address_resolution_support:2aa6 cgm_measurement:2aa7 " +
    "cgm_feature:2aa8 cgm_status:2aa9 cgm_session_start_time:2aaa cgm_session_run_time:2aab " +
    "cgm_specific_ops_control_point:2aac indoor_positioning_configuration:2aad latitude:2aae " +
    "longitude:2aaf local_north_coordinate:2ab0 local_east_coordinate.xml:2ab1 floor_number:2ab2 " +
    "altitude:2ab3 uncertainty:2ab4 location_name:2ab5 uri:2ab6 http_headers:2ab7 " +
    "http_status_code:2ab8 http_entity_body:2ab9 http_control_point:2aba https_security:2abb " +
    "tds_control_point:2abc ots_feature:2abd object_name:2abe object_type:2abf object_size:2ac0 " +
    "object_first_created:2ac1 object_last_modified:2ac2 object_id:2ac3 object_properties:2ac4 " +
    "object_action_control_point:2ac5 object_list_control_point:2ac6 object_list_filter:2ac7 " +
    "object_changed:2ac8 resolvable_private_address_only:2ac9 fitness_machine_feature:2acc " +
    "treadmill_data:2acd cross_trainer_data:2ace step_climber_data:2acf stair_climber_data:2ad0 " +
    "rower_data:2ad1 indoor_bike_data:2ad2 training_status:2ad3 supported_speed_range:2ad4 " +
    "supported_inclination_range:2ad5 supported_resistance_level_range:2ad6 " +
    "supported_heart_rate_range:2ad7 supported_power_range:2ad8 fitness_machine_control_point:2ad9 " +
    "fitness_machine_status:2ada date_utc:2aed",
);

const descriptorNames = nameTable(
  "gatt.characteristic_extended_properties:2900 gatt.characteristic_user_description:2901 " +
    "gatt.client_characteristic_configuration:2902 gatt.server_characteristic_configuration:2903 " +
    "gatt.characteristic_presentation_format:2904 gatt.characteristic_aggregate_format:2905 " +
    "valid_range:2906 external_report_reference:2907 report_reference:2908 number_of_digitals:2909 " +
    "value_trigger_setting:290a es_configuration:290b es_measurement:290c es_trigger_setting:290d " +
    "time_trigger_setting:290e",
);

const validUUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function canonicalUUID(alias) {
  const number = Number(alias) >>> 0;
  return `${number.toString(16).padStart(8, "0")}-0000-1000-8000-00805f9b34fb`;
}

// The spec's "ResolveUUIDName": a number is an alias, a lower-case UUID is
// itself, a name from the table is its UUID; anything else is a TypeError.
function resolveUUIDName(name, table, kind, example) {
  if (typeof name === "number") return canonicalUUID(name);
  const text = String(name);
  if (validUUID.test(text)) return text;
  if (table.has(text)) return canonicalUUID(table.get(text));
  throw new TypeError(
    `Invalid ${kind} name: '${text}'. It must be a valid UUID alias (e.g. 0x1234), UUID (lowercase hex ` +
      `characters e.g. '00001234-0000-1000-8000-00805f9b34fb'), or recognized standard name from ` +
      `https://www.bluetooth.com/specifications/gatt/${kind}s e.g. '${example}'.`,
  );
}

const BluetoothUUID = Object.freeze({
  getService: (name) => resolveUUIDName(name, serviceNames, "Service", "alert_notification"),
  getCharacteristic: (name) => resolveUUIDName(name, characteristicNames, "Characteristic", "aerobic_heart_rate_lower_limit"),
  getDescriptor: (name) => resolveUUIDName(name, descriptorNames, "Descriptor", "gatt.characteristic_presentation_format"),
  canonicalUUID,
});

// ---------------------------------------------------------------------------
// requestDevice's options: the spec's validation, then its matching

function canonicalDataFilter(filter, what) {
  const prefix = filter.dataPrefix === undefined ? new Uint8Array(0) : bufferSourceBytes(filter.dataPrefix);
  let mask;
  if (filter.mask === undefined) {
    mask = new Uint8Array(prefix.length).fill(0xff);
  } else {
    mask = bufferSourceBytes(filter.mask);
    if (mask.length !== prefix.length) throw new TypeError(`${what}: mask and dataPrefix must be the same length`);
  }
  return { prefix, mask };
}

function canonicalFilter(filter, index) {
  if (typeof filter !== "object" || filter === null) throw new TypeError(`filters[${index}] is not an object`);
  const known = ["services", "name", "namePrefix", "manufacturerData", "serviceData"];
  if (!known.some((key) => filter[key] !== undefined)) {
    throw new TypeError(`filters[${index}] must have at least one of ${known.join(", ")}`);
  }
  const canonical = {};
  if (filter.services !== undefined) {
    if (!Array.isArray(filter.services) || filter.services.length === 0) {
      throw new TypeError(`filters[${index}].services must be a non-empty list`);
    }
    canonical.services = filter.services.map(BluetoothUUID.getService);
  }
  if (filter.name !== undefined) {
    canonical.name = String(filter.name);
    if (utf8Length(canonical.name) > maxNameLength) throw new TypeError(`filters[${index}].name is over 248 bytes`);
  }
  if (filter.namePrefix !== undefined) {
    canonical.namePrefix = String(filter.namePrefix);
    const length = utf8Length(canonical.namePrefix);
    if (length === 0 || length > maxNameLength) {
      throw new TypeError(`filters[${index}].namePrefix must be 1 to 248 bytes`);
    }
  }
  if (filter.manufacturerData !== undefined) {
    if (!Array.isArray(filter.manufacturerData) || filter.manufacturerData.length === 0) {
      throw new TypeError(`filters[${index}].manufacturerData must be a non-empty list`);
    }
    const seen = new Set();
    canonical.manufacturerData = filter.manufacturerData.map((entry) => {
      const company = entry && entry.companyIdentifier;
      if (!Number.isInteger(company) || company < 0 || company > 0xffff) {
        throw new TypeError(`filters[${index}].manufacturerData: companyIdentifier must be 0 to 65535`);
      }
      if (seen.has(company)) throw new TypeError(`filters[${index}].manufacturerData repeats company ${company}`);
      seen.add(company);
      return { company, ...canonicalDataFilter(entry, `filters[${index}].manufacturerData`) };
    });
  }
  if (filter.serviceData !== undefined) {
    if (!Array.isArray(filter.serviceData) || filter.serviceData.length === 0) {
      throw new TypeError(`filters[${index}].serviceData must be a non-empty list`);
    }
    const seen = new Set();
    canonical.serviceData = filter.serviceData.map((entry) => {
      if (!entry || entry.service === undefined) throw new TypeError(`filters[${index}].serviceData needs a service`);
      const service = BluetoothUUID.getService(entry.service);
      if (seen.has(service)) throw new TypeError(`filters[${index}].serviceData repeats ${service}`);
      seen.add(service);
      return { service, ...canonicalDataFilter(entry, `filters[${index}].serviceData`) };
    });
  }
  return canonical;
}

// The spec's "canonicalize the request options": TypeErrors for what it
// refuses; the services and manufacturer data the page may reach.
function canonicalOptions(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("requestDevice() needs options");
  const hasFilters = options.filters !== undefined;
  if (hasFilters === Boolean(options.acceptAllDevices)) {
    throw new TypeError("Either 'filters' should be present or 'acceptAllDevices' should be true, but not both.");
  }
  if (options.exclusionFilters !== undefined && !hasFilters) {
    throw new TypeError("'exclusionFilters' needs 'filters'.");
  }
  const list = (value, what) => {
    if (!Array.isArray(value) || value.length === 0) throw new TypeError(`'${what}' must be a non-empty list.`);
    return value;
  };
  const filters = hasFilters ? list(options.filters, "filters").map(canonicalFilter) : [];
  const exclusionFilters =
    options.exclusionFilters === undefined ? [] : list(options.exclusionFilters, "exclusionFilters").map(canonicalFilter);
  const services = new Set();
  for (const filter of filters) for (const service of filter.services || []) services.add(service);
  for (const service of options.optionalServices || []) services.add(BluetoothUUID.getService(service));
  const manufacturers = new Set();
  for (const filter of filters) for (const entry of filter.manufacturerData || []) manufacturers.add(entry.company);
  for (const company of options.optionalManufacturerData || []) {
    if (!Number.isInteger(company) || company < 0 || company > 0xffff) {
      throw new TypeError("optionalManufacturerData holds company identifiers (0 to 65535)");
    }
    manufacturers.add(company);
  }
  return { filters, exclusionFilters, acceptAll: !hasFilters, services, manufacturers };
}

function dataMatches(bytes, { prefix, mask }) {
  if (bytes.length < prefix.length) return false;
  for (let index = 0; index < prefix.length; index += 1) {
    if ((bytes[index] & mask[index]) !== (prefix[index] & mask[index])) return false;
  }
  return true;
}

// An advertisement's event: a scan stream's, or the fleet's (each gateway
// publishes what it hears at most once a second per device).
function advertised(event) {
  return event === "discovered" || event === "updated" || event === "device-discovered" || event === "device-updated";
}

// What the fleet's merged view says of a device, as a scan report: its
// address and the strongest signal a gateway hears it with; the
// advertisement itself comes with the fleet's events.
function fleetReport(device) {
  const heard = Array.isArray(device.heard_by) ? device.heard_by : [];
  const rssi = heard.reduce((best, hearing) => Math.max(best, hearing.rssi), -127);
  return { address: device.address, rssi: heard.length > 0 ? rssi : 127 };
}

// What a scan report says about a device, in the shape the filters need.
function advertisement(device) {
  const manufacturerData = new Map();
  for (const entry of Object.values(device.manufacturer_data || {})) {
    manufacturerData.set(entry.company_id, hexBytes(entry.value));
  }
  const serviceData = new Map();
  for (const entry of Object.values(device.service_data || {})) serviceData.set(entry.uuid, hexBytes(entry.value));
  return {
    name: typeof device.name === "string" ? device.name : undefined,
    uuids: device.service_uuids || [],
    manufacturerData,
    serviceData,
    rssi: device.rssi,
    txPower: device.tx_power,
    appearance: device.appearance,
  };
}

function filterMatches(filter, seen) {
  if (filter.name !== undefined && seen.name !== filter.name) return false;
  if (filter.namePrefix !== undefined && !(seen.name || "").startsWith(filter.namePrefix)) return false;
  if (filter.services && !filter.services.every((uuid) => seen.uuids.includes(uuid))) return false;
  for (const entry of filter.manufacturerData || []) {
    const bytes = seen.manufacturerData.get(entry.company);
    if (!bytes || !dataMatches(bytes, entry)) return false;
  }
  for (const entry of filter.serviceData || []) {
    const bytes = seen.serviceData.get(entry.service);
    if (!bytes || !dataMatches(bytes, entry)) return false;
  }
  return true;
}

function deviceMatches(request, seen) {
  if (request.acceptAll) return true;
  return request.filters.some((f) => filterMatches(f, seen)) && !request.exclusionFilters.some((f) => filterMatches(f, seen));
}

// ---------------------------------------------------------------------------
// The devices this page may use, kept per gateway across visits

function storageKey() {
  return `blegateway.webbluetooth.devices ${scope()}`;
}

function storedGrants() {
  try {
    const stored = JSON.parse(localStorage.getItem(storageKey()) || "{}");
    return typeof stored === "object" && stored !== null ? stored : {};
  } catch {
    return {};
  }
}

function storeGrant(device) {
  const grants = storedGrants();
  grants[device.id] = { name: device.name, services: [...device._services], manufacturers: [...device._manufacturers] };
  try {
    localStorage.setItem(storageKey(), JSON.stringify(grants));
  } catch {
    // Private browsing: the grant lasts as long as the page.
  }
}

// One object per device and gateway (the spec's "the same BluetoothDevice").
const devices = new Map();

function deviceFor(address, name) {
  const key = `${scope()} ${address}`;
  let device = devices.get(key);
  if (!device) {
    device = new BluetoothDevice(address, name);
    devices.set(key, device);
  } else if (name !== undefined) {
    device._name = name;
  }
  return device;
}

// ---------------------------------------------------------------------------
// Disconnections, for every connected device of the page: one stream of the
// gateway's device-disconnected events, open while any device is connected.

const disconnectionWatch = { stream: null, ready: null, devices: new Set() };

async function watchDisconnections(device) {
  disconnectionWatch.devices.add(device);
  if (!disconnectionWatch.stream) {
    // The fleet's stream has every event of every gateway; this gateway's
    // is asked for disconnections alone.
    const [path, query] = settings.fleet ? ["v1/fleet/events", {}] : ["v1/events", { type: "device-disconnected" }];
    const stream = openStream(path, query, (event, data) => {
      if (event !== "device-disconnected") return;
      for (const watched of disconnectionWatch.devices) {
        if (watched.id === data.address) watched.gatt._confirmDisconnection();
      }
    });
    disconnectionWatch.stream = stream;
    disconnectionWatch.ready = stream.ready;
    stream.ended.then((how) => {
      if (disconnectionWatch.stream !== stream) return;
      disconnectionWatch.stream = null;
      // A refusal (a bad key, say) rejects the connect() that opened it.
      if (how === "closed" || how === "refused") return;
      if (disconnectionWatch.devices.size > 0) {
        console.error(`blegateway: lost the connection to the gateway at ${settings.base} (${how})`);
      }
      for (const watched of [...disconnectionWatch.devices]) watched.gatt._disconnected();
    });
  }
  try {
    await disconnectionWatch.ready;
  } catch (error) {
    unwatchDisconnections(device);
    throw error;
  }
}

function unwatchDisconnections(device) {
  disconnectionWatch.devices.delete(device);
  if (disconnectionWatch.devices.size === 0 && disconnectionWatch.stream) {
    const stream = disconnectionWatch.stream;
    disconnectionWatch.stream = null;
    stream.close();
  }
}

// ---------------------------------------------------------------------------
// The API objects

// A lookup that found nothing, worded as Chrome words it.
function notFound(what, uuid, where) {
  return new DOMException(`No ${what} ${uuid ? `matching UUID ${uuid} ` : ""}${where}.`, "NotFoundError");
}

// Fires an event at `target`, then up the spec's Bluetooth tree
// (characteristic, service, device, navigator.bluetooth) through each
// object's `_parent`, with `target` kept as the object it concerns.
function fire(target, type, properties = {}) {
  for (let node = target; node; node = node._parent) {
    const event = new Event(type, { bubbles: true });
    Object.defineProperty(event, "target", { value: target });
    for (const [name, value] of Object.entries(properties)) {
      Object.defineProperty(event, name, { value, enumerable: true });
    }
    node.dispatchEvent(event);
  }
}

// EventTarget with the spec's `on<event>` attributes.
class HandlerTarget extends EventTarget {
  constructor(types) {
    super();
    for (const type of types) {
      let handler = null;
      Object.defineProperty(this, `on${type}`, {
        get: () => handler,
        set: (value) => {
          if (handler) this.removeEventListener(type, handler);
          handler = typeof value === "function" ? value : null;
          if (handler) this.addEventListener(type, handler);
        },
      });
    }
  }
}

class BluetoothDevice extends HandlerTarget {
  constructor(address, name) {
    super([
      "gattserverdisconnected",
      "advertisementreceived",
      "characteristicvaluechanged",
      "serviceadded",
      "servicechanged",
      "serviceremoved",
    ]);
    this._address = address;
    this._name = name;
    this._services = new Set();
    this._manufacturers = new Set();
    this._gatt = new BluetoothRemoteGATTServer(this);
    this._watch = null;
  }

  get id() {
    return this._address;
  }

  get name() {
    return this._name;
  }

  get gatt() {
    return this._gatt;
  }

  get watchingAdvertisements() {
    return this._watch !== null;
  }

  get _parent() {
    return bluetooth;
  }

  _path(suffix = "") {
    return `${devicesPath()}/${encodeURIComponent(this._address)}${suffix}`;
  }

  _allows(uuid) {
    return this._services.has(uuid);
  }

  // Streams this device's advertisements as `advertisementreceived`
  // events until `options.signal` aborts.
  async watchAdvertisements(options = {}) {
    const signal = options.signal;
    if (signal && signal.aborted) throw new DOMException("The watch was aborted.", "AbortError");
    if (this._watch) return undefined;
    const onEvent = (event, data) => {
      if (advertised(event) && data.device) this._advertised(data.device);
    };
    const stream = settings.fleet
      ? openStream("v1/fleet/events", { device: this._address }, onEvent)
      : openStream("v1/scan", { address: this._address, duplicates: "true" }, onEvent);
    this._watch = stream;
    const stop = () => {
      stream.close();
      if (this._watch === stream) this._watch = null;
    };
    if (signal) signal.addEventListener("abort", stop, { once: true });
    stream.ended.then(() => {
      if (this._watch === stream) this._watch = null;
    });
    try {
      await stream.ready;
    } catch (error) {
      stop();
      throw error;
    }
    return undefined;
  }

  _advertised(report) {
    const seen = advertisement(report);
    const manufacturerData = new Map();
    for (const [company, bytes] of seen.manufacturerData) {
      if (this._manufacturers.has(company)) manufacturerData.set(company, dataView(bytes));
    }
    const serviceData = new Map();
    for (const [uuid, bytes] of seen.serviceData) if (this._allows(uuid)) serviceData.set(uuid, dataView(bytes));
    if (seen.name !== undefined) this._name = seen.name;
    fire(this, "advertisementreceived", {
      device: this,
      uuids: seen.uuids.filter((uuid) => this._allows(uuid)),
      name: seen.name,
      appearance: seen.appearance,
      txPower: seen.txPower,
      rssi: seen.rssi === 127 ? undefined : seen.rssi,
      manufacturerData,
      serviceData,
    });
  }

  async forget() {
    const grants = storedGrants();
    delete grants[this.id];
    try {
      localStorage.setItem(storageKey(), JSON.stringify(grants));
    } catch {
      // Nothing was stored.
    }
    this._services.clear();
    this.gatt.disconnect();
  }
}

class BluetoothRemoteGATTServer {
  constructor(device) {
    this._device = device;
    this._connected = false;
    // Each connection is a generation: attributes from an earlier one are
    // no longer valid (InvalidStateError), as after a reconnection in Chrome.
    this._generation = 0;
    this._tree = null;
    this._attributes = new Map();
    this._connecting = null;
    this._disconnecting = null;
  }

  get device() {
    return this._device;
  }

  get connected() {
    return this._connected;
  }

  async connect() {
    if (this._connected) return this;
    if (this._connecting) return this._connecting;
    const attempt = (async () => {
      const device = this._device;
      // A disconnect() still on its way would undo this connection.
      if (this._disconnecting) await this._disconnecting;
      await watchDisconnections(device);
      try {
        await callJSON("POST", device._path("/connect"));
        const tree = await callJSON("GET", device._path("/services"));
        this._generation += 1;
        this._tree = Array.isArray(tree) ? tree : [];
        this._attributes = new Map();
        this._connected = true;
        return this;
      } catch (error) {
        unwatchDisconnections(device);
        throw error;
      }
    })();
    this._connecting = attempt;
    try {
      return await attempt;
    } finally {
      this._connecting = null;
    }
  }

  disconnect() {
    if (!this._connected) return;
    const request = call("POST", this._device._path("/disconnect")).then(
      () => undefined,
      (error) => console.error(`blegateway: disconnecting ${this._device.id} failed: ${error.message}`),
    );
    this._disconnecting = request;
    request.then(() => {
      if (this._disconnecting === request) this._disconnecting = null;
    });
    this._disconnected();
  }

  // The gateway reported a disconnection: believe it only if the device
  // is still disconnected (the report may be from before a reconnection).
  async _confirmDisconnection() {
    try {
      const state = await callJSON("GET", this._device._path());
      // The fleet's view says which gateways have it connected.
      const connected = settings.fleet ? Array.isArray(state && state.connected_on) && state.connected_on.length > 0 : state && state.connected;
      if (connected) return;
    } catch {
      // Gone from the gateway: disconnected.
    }
    this._disconnected();
  }

  _disconnected() {
    if (!this._connected) return;
    this._connected = false;
    this._generation += 1;
    this._tree = null;
    stopNotificationsOf(this._device);
    unwatchDisconnections(this._device);
    fire(this._device, "gattserverdisconnected");
  }

  _check(generation) {
    if (!this._connected) throw new DOMException("GATT Server is disconnected. Cannot perform GATT operations.", "NetworkError");
    if (generation !== undefined && generation !== this._generation) {
      throw new DOMException("The attribute is no longer valid: the device was reconnected. Get it again.", "InvalidStateError");
    }
  }

  // The object for an attribute of the tree, one per handle and connection.
  _attribute(handle, make) {
    let attribute = this._attributes.get(handle);
    if (!attribute) {
      attribute = make();
      this._attributes.set(handle, attribute);
    }
    return attribute;
  }

  _service(json) {
    return this._attribute(json.handle, () => new BluetoothRemoteGATTService(this, json));
  }

  async getPrimaryService(service) {
    return (await this._primaryServices(service, true))[0];
  }

  async getPrimaryServices(service) {
    return this._primaryServices(service, false);
  }

  async _primaryServices(service, single) {
    const uuid = service === undefined ? undefined : BluetoothUUID.getService(service);
    this._check();
    if (uuid !== undefined && !this._device._allows(uuid)) {
      throw new DOMException(
        `Origin is not allowed to access the service. Tip: Add the service UUID to 'optionalServices' ` +
          `in requestDevice() options. (${uuid})`,
        "SecurityError",
      );
    }
    const found = this._tree.filter(
      (json) => json.primary && this._device._allows(json.uuid) && (uuid === undefined || json.uuid === uuid),
    );
    if (found.length === 0) {
      throw notFound("Services", uuid, "found in Device");
    }
    const services = found.map((json) => this._service(json));
    return single ? services.slice(0, 1) : services;
  }
}

class BluetoothRemoteGATTService extends HandlerTarget {
  constructor(server, json) {
    super(["characteristicvaluechanged", "serviceadded", "servicechanged", "serviceremoved"]);
    this._server = server;
    this._json = json;
    this._generation = server._generation;
  }

  get device() {
    return this._server._device;
  }

  get uuid() {
    return this._json.uuid;
  }

  get isPrimary() {
    return Boolean(this._json.primary);
  }

  get _parent() {
    return this.device;
  }

  _characteristic(json) {
    return this._server._attribute(json.handle, () => new BluetoothRemoteGATTCharacteristic(this, json));
  }

  async getCharacteristic(characteristic) {
    return (await this._characteristics(characteristic))[0];
  }

  async getCharacteristics(characteristic) {
    return this._characteristics(characteristic);
  }

  async _characteristics(characteristic) {
    const uuid = characteristic === undefined ? undefined : BluetoothUUID.getCharacteristic(characteristic);
    this._server._check(this._generation);
    const found = this._json.characteristics.filter((json) => uuid === undefined || json.uuid === uuid);
    if (found.length === 0) {
      throw notFound("Characteristics", uuid, "found in Service");
    }
    return found.map((json) => this._characteristic(json));
  }

  async getIncludedService(service) {
    return (await this._included(service))[0];
  }

  async getIncludedServices(service) {
    return this._included(service);
  }

  async _included(service) {
    const uuid = service === undefined ? undefined : BluetoothUUID.getService(service);
    this._server._check(this._generation);
    if (uuid !== undefined && !this.device._allows(uuid)) {
      throw new DOMException(`Origin is not allowed to access the service ${uuid}.`, "SecurityError");
    }
    const found = [];
    for (const include of this._json.includes || []) {
      const json = this._server._tree.find((candidate) => candidate.handle === include.handle);
      if (json && this.device._allows(json.uuid) && (uuid === undefined || json.uuid === uuid)) {
        found.push(this._server._service(json));
      }
    }
    if (found.length === 0) {
      throw notFound("Services", uuid, "included in Service");
    }
    return found;
  }
}

class BluetoothCharacteristicProperties {
  constructor(flags) {
    const has = (flag) => flags.includes(flag);
    Object.defineProperties(this, {
      broadcast: { value: has("broadcast"), enumerable: true },
      read: { value: has("read"), enumerable: true },
      writeWithoutResponse: { value: has("write-without-response"), enumerable: true },
      write: { value: has("write"), enumerable: true },
      notify: { value: has("notify"), enumerable: true },
      indicate: { value: has("indicate"), enumerable: true },
      authenticatedSignedWrites: { value: has("authenticated-signed-writes"), enumerable: true },
      reliableWrite: { value: has("reliable-write"), enumerable: true },
      writableAuxiliaries: { value: has("writable-auxiliaries"), enumerable: true },
    });
  }
}

class BluetoothRemoteGATTCharacteristic extends HandlerTarget {
  constructor(service, json) {
    super(["characteristicvaluechanged"]);
    this._service = service;
    this._json = json;
    this._properties = new BluetoothCharacteristicProperties(json.flags || []);
    this._value = null;
  }

  get service() {
    return this._service;
  }

  get uuid() {
    return this._json.uuid;
  }

  get properties() {
    return this._properties;
  }

  get value() {
    return this._value;
  }

  get _parent() {
    return this._service;
  }

  get _server() {
    return this._service._server;
  }

  _path(suffix) {
    return this._service.device._path(`/characteristics/handle:${this._json.handle}${suffix}`);
  }

  _check() {
    this._server._check(this._service._generation);
  }

  _received(bytes) {
    this._value = dataView(bytes);
    fire(this, "characteristicvaluechanged");
    return this._value;
  }

  async readValue() {
    this._check();
    if (!this._properties.read) throw new DOMException("GATT operation not permitted.", "NotSupportedError");
    return this._received(await readBytes(this._path("/value")));
  }

  async _write(value, type) {
    const bytes = bufferSourceBytes(value);
    this._check();
    if (bytes.length > maxValueLength) {
      throw new DOMException(`Value can't exceed ${maxValueLength} bytes.`, "InvalidModificationError");
    }
    const permitted = type === "command" ? this._properties.writeWithoutResponse : this._properties.write;
    if (!permitted) throw new DOMException("GATT operation not permitted.", "NotSupportedError");
    await writeBytes(this._path("/value"), bytes, { type });
    return undefined;
  }

  // Deprecated in the spec: with response when the characteristic allows
  // it, else without.
  async writeValue(value) {
    return this._write(value, this._properties.write || !this._properties.writeWithoutResponse ? "request" : "command");
  }

  async writeValueWithResponse(value) {
    return this._write(value, "request");
  }

  async writeValueWithoutResponse(value) {
    return this._write(value, "command");
  }

  async startNotifications() {
    this._check();
    if (!this._properties.notify && !this._properties.indicate) {
      throw new DOMException("GATT operation not permitted.", "NotSupportedError");
    }
    await startNotifications(this);
    return this;
  }

  async stopNotifications() {
    stopNotifications(this);
    return this;
  }

  _descriptor(json) {
    return this._server._attribute(json.handle, () => new BluetoothRemoteGATTDescriptor(this, json));
  }

  async getDescriptor(descriptor) {
    return (await this._descriptors(descriptor))[0];
  }

  async getDescriptors(descriptor) {
    return this._descriptors(descriptor);
  }

  async _descriptors(descriptor) {
    const uuid = descriptor === undefined ? undefined : BluetoothUUID.getDescriptor(descriptor);
    this._check();
    const found = (this._json.descriptors || []).filter((json) => uuid === undefined || json.uuid === uuid);
    if (found.length === 0) {
      throw notFound("Descriptors", uuid, "found in Characteristic");
    }
    return found.map((json) => this._descriptor(json));
  }
}

const clientCharacteristicConfiguration = canonicalUUID(0x2902);

class BluetoothRemoteGATTDescriptor {
  constructor(characteristic, json) {
    this._characteristic = characteristic;
    this._json = json;
    this._value = null;
  }

  get characteristic() {
    return this._characteristic;
  }

  get uuid() {
    return this._json.uuid;
  }

  get value() {
    return this._value;
  }

  _path() {
    return this._characteristic._path(`/descriptors/handle:${this._json.handle}/value`);
  }

  async readValue() {
    this._characteristic._check();
    this._value = dataView(await readBytes(this._path()));
    return this._value;
  }

  async writeValue(value) {
    const bytes = bufferSourceBytes(value);
    this._characteristic._check();
    // The spec's blocklist excludes writes to the CCC descriptor:
    // startNotifications() is the way to subscribe.
    if (this.uuid === clientCharacteristicConfiguration) {
      throw new DOMException("writeValue() called on blocklisted object marked exclude-writes.", "SecurityError");
    }
    if (bytes.length > maxValueLength) {
      throw new DOMException(`Value can't exceed ${maxValueLength} bytes.`, "InvalidModificationError");
    }
    await writeBytes(this._path(), bytes);
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Notifications: one stream per characteristic in this page; the gateway
// shares one subscription among every stream of every page.

const notificationStreams = new Map();

async function startNotifications(characteristic) {
  const key = characteristic._path("");
  const existing = notificationStreams.get(key);
  if (existing) {
    existing.listeners.add(characteristic);
    return existing.stream.ready;
  }
  const device = characteristic.service.device;
  const entry = { device, listeners: new Set([characteristic]), stream: null };
  entry.stream = openStream(characteristic._path("/notifications"), {}, (event, data) => {
    if (event === "notification") {
      const bytes = hexBytes(data.value);
      for (const listener of entry.listeners) listener._received(bytes);
    } else if (event === "subscription-interrupted") {
      console.warn(`blegateway: notifications of ${characteristic.uuid} interrupted (${data.reason})`);
    }
  });
  notificationStreams.set(key, entry);
  entry.stream.ended.then((how) => {
    if (notificationStreams.get(key) !== entry) return;
    notificationStreams.delete(key);
    // The gateway ended the subscription (the device disconnected) or the
    // connection to the gateway broke: either way the page hears of it.
    if (how === "finished" || how === "dropped") device.gatt._confirmDisconnection();
  });
  try {
    await entry.stream.ready;
  } catch (error) {
    if (notificationStreams.get(key) === entry) notificationStreams.delete(key);
    throw error;
  }
  return undefined;
}

function stopNotifications(characteristic) {
  const key = characteristic._path("");
  const entry = notificationStreams.get(key);
  if (!entry) return;
  entry.listeners.delete(characteristic);
  if (entry.listeners.size === 0) {
    notificationStreams.delete(key);
    entry.stream.close();
  }
}

function stopNotificationsOf(device) {
  for (const [key, entry] of [...notificationStreams]) {
    if (entry.device === device) {
      notificationStreams.delete(key);
      entry.stream.close();
    }
  }
}

// ---------------------------------------------------------------------------
// The chooser: a modal <dialog> listing the matching devices live from a scan

const chooserStyle = `
.blegateway-chooser { font: 15px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff;
  border: 1px solid #8a8a8a; border-radius: 8px; padding: 0; width: min(28rem, 92vw); }
.blegateway-chooser::backdrop { background: rgb(0 0 0 / 35%); }
.blegateway-chooser h2 { font-size: 1.05rem; margin: 0; padding: 1rem 1rem 0.25rem; }
.blegateway-chooser p { margin: 0; padding: 0 1rem 0.5rem; color: #444; }
.blegateway-chooser ul { list-style: none; margin: 0; padding: 0.25rem 0.5rem; max-height: 16rem; overflow-y: auto;
  border-block: 1px solid #ddd; min-height: 3rem; }
.blegateway-chooser li button { display: flex; justify-content: space-between; gap: 1rem; width: 100%;
  font: inherit; text-align: start; background: none; border: 0; border-radius: 4px; padding: 0.5rem; cursor: pointer; }
.blegateway-chooser li button:hover,
.blegateway-chooser li button:focus-visible { background: #e8f0fe; outline: 2px solid #1a5fb4; }
.blegateway-chooser .blegateway-rssi { color: #555; font-variant-numeric: tabular-nums; white-space: nowrap; }
.blegateway-chooser footer { display: flex; justify-content: flex-end; padding: 0.75rem 1rem; }
.blegateway-chooser footer button { font: inherit; padding: 0.35rem 1rem; }
`;

function element(tag, properties = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(properties)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// Shows the chooser; resolves to the chosen scan report, rejects with
// NotFoundError when the user cancels and with the gateway's error when
// the scan cannot run or breaks.
function choose(request) {
  if (!document.getElementById("blegateway-chooser-style")) {
    document.head.append(element("style", { id: "blegateway-chooser-style", text: chooserStyle }));
  }
  const title = element("h2", { id: "blegateway-chooser-title", text: `${location.host || "This page"} wants to pair` });
  const host = new URL(settings.base).host;
  const via = element("p", {
    text: settings.fleet ? `Devices near the fleet of the gateway at ${host}` : `Devices near the gateway at ${host}`,
  });
  const status = element("p", { id: "blegateway-chooser-status", role: "status", "aria-live": "polite", text: "Scanning…" });
  const list = element("ul", { "aria-label": "Devices found" });
  const cancel = element("button", { type: "button", text: "Cancel" });
  const dialog = element(
    "dialog",
    { class: "blegateway-chooser", "aria-labelledby": title.id, "aria-describedby": status.id },
    [title, via, status, list, element("footer", {}, [cancel])],
  );
  document.body.append(dialog);

  return new Promise((resolve, reject) => {
    const reports = new Map();
    let stream = null;
    let settled = false;
    const finish = (outcome) => {
      if (settled) return;
      settled = true;
      if (stream) stream.close();
      if (dialog.open) dialog.close();
      dialog.remove();
      outcome();
    };
    const describe = (report) => {
      const rssi = Number.isInteger(report.rssi) && report.rssi !== 127 ? `${report.rssi} dBm` : "";
      const named = typeof report.name === "string" && report.name !== "";
      const name = named ? report.name : `Unknown or unsupported device (${report.address})`;
      return { name, rssi };
    };
    const show = (report) => {
      const { name, rssi } = describe(report);
      let button = list.querySelector(`button[data-address="${report.address}"]`);
      if (!button) {
        button = element("button", { type: "button", "data-address": report.address }, [
          element("span", { class: "blegateway-name" }),
          element("span", { class: "blegateway-rssi" }),
        ]);
        button.addEventListener("click", () => finish(() => resolve(reports.get(report.address))));
        list.append(element("li", {}, [button]));
      }
      button.querySelector(".blegateway-name").textContent = name;
      button.querySelector(".blegateway-rssi").textContent = rssi;
      button.setAttribute("aria-label", rssi ? `${name}, signal ${rssi}` : name);
    };
    const countText = () => {
      const count = list.children.length;
      status.textContent = count === 0 ? "Scanning…" : `${count} device${count === 1 ? "" : "s"} found. Scanning…`;
    };
    cancel.addEventListener("click", () =>
      finish(() => reject(new DOMException("User cancelled the requestDevice() chooser.", "NotFoundError"))),
    );
    // Escape closes a modal dialog by itself: that is a cancel too.
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      cancel.click();
    });
    list.addEventListener("keydown", (event) => {
      if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
      const buttons = [...list.querySelectorAll("button")];
      const index = buttons.indexOf(document.activeElement);
      const next = buttons[index + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) {
        next.focus();
        event.preventDefault();
      }
    });
    dialog.showModal();

    const offer = (report) => {
      if (settled || !deviceMatches(request, advertisement(report))) return;
      reports.set(report.address, report);
      show(report);
      countText();
    };
    const onEvent = (event, data) => {
      const report = data.device;
      if (!report || typeof report.address !== "string") return;
      if (advertised(event)) {
        offer(report);
      } else if (event === "lost" && reports.has(report.address)) {
        // (One gateway of a fleet losing a device says nothing of the others.)
        reports.delete(report.address);
        list.querySelector(`button[data-address="${report.address}"]`).parentElement.remove();
        countText();
      }
    };
    if (settings.fleet) {
      // What the fleet hears already (an address and a signal: enough for
      // acceptAllDevices), then each advertisement as a gateway hears it.
      stream = openStream("v1/fleet/events", {}, onEvent);
      stream.ready
        .then(() => callJSON("GET", "v1/fleet/devices"))
        .then(
          (known) =>
            (Array.isArray(known) ? known : [])
              .filter((device) => !reports.has(device.address))
              .forEach((device) => offer(fleetReport(device))),
          () => undefined,
        );
    } else {
      stream = openStream("v1/scan", { duplicates: "true", min_interval_ms: "1000" }, onEvent);
      // A connected device (to this page, another tab or another client of
      // the gateway) no longer advertises: offer it as Chrome does.
      callJSON("GET", "v1/devices", { query: { connected: "true" } }).then(
        (connected) => (Array.isArray(connected) ? connected : []).forEach(offer),
        () => undefined,
      );
    }
    stream.ready.catch((error) => finish(() => reject(error)));
    stream.ended.then((how) => {
      if (how === "finished" || how === "dropped") {
        const why = how === "dropped" ? "lost the gateway" : "the gateway stopped it";
        finish(() => reject(new DOMException(`blegateway: the scan ended (${why})`, "NetworkError")));
      }
    });
  });
}

// ---------------------------------------------------------------------------
// navigator.bluetooth

class Bluetooth extends HandlerTarget {
  constructor() {
    super(["availabilitychanged", "advertisementreceived", "gattserverdisconnected", "characteristicvaluechanged"]);
  }

  // True when the gateway answers and has an adapter.
  async getAvailability() {
    try {
      const response = await fetch(new URL("health", settings.base), { cache: "no-store" });
      const health = await response.json();
      return Array.isArray(health.adapters) && health.adapters.length > 0;
    } catch {
      return false;
    }
  }

  async requestDevice(options) {
    const request = canonicalOptions(options);
    const report = await choose(request);
    const device = deviceFor(report.address, typeof report.name === "string" ? report.name : undefined);
    for (const service of request.services) device._services.add(service);
    for (const company of request.manufacturers) device._manufacturers.add(company);
    storeGrant(device);
    return device;
  }

  // The devices this page was given before, on this gateway.
  async getDevices() {
    return Object.entries(storedGrants()).map(([address, grant]) => {
      const device = deviceFor(address, typeof grant.name === "string" ? grant.name : undefined);
      for (const service of grant.services || []) device._services.add(service);
      for (const company of grant.manufacturers || []) device._manufacturers.add(company);
      return device;
    });
  }
}

const bluetooth = new Bluetooth();

const interfaces = {
  Bluetooth,
  BluetoothDevice,
  BluetoothRemoteGATTServer,
  BluetoothRemoteGATTService,
  BluetoothRemoteGATTCharacteristic,
  BluetoothRemoteGATTDescriptor,
  BluetoothCharacteristicProperties,
  BluetoothUUID,
};

function install() {
  const native = "bluetooth" in navigator && navigator.bluetooth;
  if (native && !settings.force) return false;
  Object.defineProperty(navigator, "bluetooth", { value: bluetooth, configurable: true, enumerable: true });
  for (const [name, value] of Object.entries(interfaces)) {
    Object.defineProperty(window, name, { value, configurable: true, writable: true });
  }
  return true;
}

const blegateway = Object.freeze({
  version,
  configure,
  bluetooth,
  BluetoothUUID,
  installed: install(),
  get gateway() {
    return settings.base;
  },
});
window.blegateway = blegateway;

export { blegateway, bluetooth, BluetoothUUID, configure };
export default blegateway;
