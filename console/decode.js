// Advertisement data and characteristic values in words: what the
// gateway's decoders returned (`decoded`), and the value formats a
// notification plot can be parsed with.

import { hexBytes, shortUUID } from "./ui.js";

// BTHome object names the gateway uses, with their units.
const bthomeUnits = {
  temperature: "°C", humidity: "%", battery: "%", pressure: "hPa", illuminance: "lx", voltage: "V",
  current: "A", power: "W", energy: "kWh", co2: "ppm", tvoc: "µg/m³", moisture: "%", dewpoint: "°C",
  pm2_5: "µg/m³", pm10: "µg/m³", mass: "kg", distance: "mm", speed: "m/s", rotation: "°", volume: "L",
  gas: "m³", water: "L", uv_index: "", count: "", duration: "s",
};
const quiet = new Set(["format", "company_id", "service_uuid", "version", "encrypted", "trigger_based"]);

function unit(key) {
  const base = key.replace(/_\d+$/, "");
  return bthomeUnits[base] ?? "";
}

const words = (key) => key.replace(/_/g, " ");

/// One decoded frame in a sentence, e.g. "BTHome v2: temperature 25 °C, humidity 50.55 %, battery 97 %".
export function describeDecoded(frame) {
  switch (frame.format) {
    case "ibeacon":
      return `iBeacon ${frame.uuid} · major ${frame.major} · minor ${frame.minor} · ${frame.measured_power} dBm at 1 m`;
    case "eddystone-url":
      return `Eddystone URL ${frame.url} · TX ${frame.tx_power} dBm at 0 m`;
    case "eddystone-uid":
      return `Eddystone UID namespace ${frame.namespace} · instance ${frame.instance} · TX ${frame.tx_power} dBm at 0 m`;
    case "eddystone-tlm": {
      const hours = frame.uptime_s >= 3600 ? `${(frame.uptime_s / 3600).toFixed(1)} h` : `${Math.round(frame.uptime_s / 60)} min`;
      return `Eddystone TLM · battery ${frame.battery_mv} mV · ${frame.temperature} °C · ${frame.advertisement_count} advertisements · up ${hours}`;
    }
    case "bthome": {
      const values = Object.entries(frame)
        .filter(([key]) => !quiet.has(key))
        .map(([key, value]) => `${words(key)} ${value}${unit(key) ? ` ${unit(key)}` : ""}`);
      const state = frame.encrypted ? " (encrypted)" : "";
      return `BTHome v${frame.version}${state}: ${values.join(", ") || "no values"}`;
    }
    default: {
      const values = Object.entries(frame).filter(([key]) => !quiet.has(key)).map(([key, value]) => `${words(key)} ${value}`);
      return `${frame.format}: ${values.join(", ")}`;
    }
  }
}

/// The raw manufacturer and service data, one line each.
export function rawData(device) {
  const lines = [];
  for (const entry of Object.values(device.manufacturer_data || {})) {
    const id = `0x${entry.company_id.toString(16).padStart(4, "0")}`;
    lines.push(`${entry.company ? `${entry.company} (${id})` : `company ${id}`}: ${entry.value}`);
  }
  for (const entry of Object.values(device.service_data || {})) {
    lines.push(`${entry.name ? `${entry.name} (${shortUUID(entry.uuid)})` : `service ${shortUUID(entry.uuid)}`}: ${entry.value}`);
  }
  return lines;
}

/// BlueZ does not say whether an advertisement is connectable; a device
/// that advertises nothing but beacon frames (iBeacon, Eddystone, BTHome)
/// is taken as a beacon, anything else (or one that was connected or
/// paired) as connectable.
export function looksConnectable(device) {
  if (device.connected || device.paired || device.services_resolved) return true;
  const beacon = (device.decoded || []).length > 0;
  const services = (device.service_uuids || []).filter((uuid) => !["feaa", "fcd2"].includes(shortUUID(uuid)));
  return !beacon || services.length > 0;
}

function float11073(bytes, offset) {
  const raw = bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16);
  let mantissa = raw & 0xffffff;
  if (mantissa & 0x800000) mantissa -= 0x1000000;
  let exponent = bytes[offset + 3];
  if (exponent & 0x80) exponent -= 0x100;
  return mantissa * 10 ** exponent;
}

/// The formats a value can be plotted in: each parses the bytes into a
/// number (NaN when they do not fit), with a unit.
export const formats = {
  uint8: { label: "uint8", parse: (b) => (b.length >= 1 ? b[0] : NaN) },
  uint16: { label: "uint16 (little-endian)", parse: (b) => (b.length >= 2 ? new DataView(b.buffer).getUint16(0, true) : NaN) },
  uint32: { label: "uint32 (little-endian)", parse: (b) => (b.length >= 4 ? new DataView(b.buffer).getUint32(0, true) : NaN) },
  int8: { label: "int8", parse: (b) => (b.length >= 1 ? new DataView(b.buffer).getInt8(0) : NaN) },
  int16: { label: "int16 (little-endian)", parse: (b) => (b.length >= 2 ? new DataView(b.buffer).getInt16(0, true) : NaN) },
  int32: { label: "int32 (little-endian)", parse: (b) => (b.length >= 4 ? new DataView(b.buffer).getInt32(0, true) : NaN) },
  float32: { label: "float32 (little-endian)", parse: (b) => (b.length >= 4 ? new DataView(b.buffer).getFloat32(0, true) : NaN) },
  "heart-rate": {
    label: "heart-rate measurement (bpm)",
    unit: "bpm",
    parse: (b) => (b.length < 2 ? NaN : b[0] & 1 ? (b.length >= 3 ? b[1] | (b[2] << 8) : NaN) : b[1]),
  },
  temperature: {
    label: "temperature measurement (°C)",
    unit: "°C",
    parse: (b) => (b.length >= 5 ? Math.round(float11073(b, 1) * 100) / 100 : NaN),
  },
};

/// The format that fits a characteristic best, from its UUID.
export function defaultFormat(uuid) {
  return { "2a37": "heart-rate", "2a1c": "temperature", "2a6e": "int16", "2a19": "uint8" }[shortUUID(uuid)] || "uint8";
}

export function parseValue(format, hex) {
  const parser = formats[format] || formats.uint8;
  return parser.parse(hexBytes(hex));
}
