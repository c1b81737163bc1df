// The Operations view: the gateway's health (GET /health), its adapters,
// and a few figures parsed from GET /metrics (Prometheus text), read
// every 5 s while the view is open.

import { api, apiText } from "./api.js";
import { $, attempt, button, element, labelCells } from "./ui.js";

let timer = null;
let previous = null; // { time, notifications }

/// Prometheus text exposition to [{ name, labels, value }].
export function parseMetrics(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const pair of (match[3] || "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[4]) });
  }
  return samples;
}

const sum = (samples, name) => samples.filter((sample) => sample.name === name).reduce((total, sample) => total + sample.value, 0);
const has = (samples, name) => samples.some((sample) => sample.name === name);

function figures(samples) {
  return {
    connected: sum(samples, "blegateway_devices_connected"),
    notifications: sum(samples, "blegateway_characteristic_values_total"),
    streams: sum(samples, "blegateway_open_streams"),
    dbusErrors: sum(samples, "blegateway_dbus_call_errors_total"),
  };
}

function entry(list, term, description, state) {
  list.append(element("dt", { textContent: term }), element("dd", { className: state || "", textContent: description }));
}

const megabytes = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;

// The state store and the MQTT bridge, from their metrics (a gateway
// without them exports none).
function storeHealth(samples) {
  if (!has(samples, "blegateway_store_events")) return ["none (--no-state): kept devices and subscriptions end with the process", "muted"];
  const lost = sum(samples, "blegateway_store_lost_events_total");
  const text = `${sum(samples, "blegateway_store_events")} events stored, ${megabytes(sum(samples, "blegateway_store_size_bytes"))}, ` +
    `${sum(samples, "blegateway_store_lag_events")} waiting to be written${lost ? `, ${lost} lost` : ""}`;
  return [text, lost ? "warn" : "good"];
}

function mqttHealth(samples) {
  if (!has(samples, "blegateway_mqtt_connected")) return ["not used (--mqtt)", "muted"];
  const connected = sum(samples, "blegateway_mqtt_connected") > 0;
  const queued = sum(samples, "blegateway_mqtt_queued_messages");
  const dropped = sum(samples, "blegateway_mqtt_dropped_messages_total");
  return [`${connected ? "connected" : "not connected"}, ${queued} queued, ${dropped} dropped`, connected ? "good" : "bad"];
}

function renderHealth(health, samples) {
  const list = $("health");
  list.replaceChildren();
  const bluetoothd = { "bluetoothd-unavailable": ["not running", "bad"], "bus-unavailable": ["unknown (no bus)", "bad"] }[health.state] || ["running", "good"];
  const overall = health.status === "ok" ? "good" : health.status === "degraded" ? "warn" : "bad";
  entry(list, "Overall", `${health.status}: ${health.detail}`, overall);
  entry(list, "bluetoothd", bluetoothd[0], bluetoothd[1]);
  const bus = health.state === "bus-unavailable";
  entry(list, "D-Bus", bus ? "connection lost, reconnecting" : "connected", bus ? "bad" : "good");
  const adapters = health.adapters.map((adapter) => `${adapter.id} ${adapter.state}`).join(", ") || "none";
  entry(list, "Adapters", adapters, health.adapters.some((adapter) => adapter.state === "powered-on") ? "good" : "bad");
  entry(list, "State store", ...storeHealth(samples));
  entry(list, "MQTT broker", ...mqttHealth(samples));
  // The fleet (gateways sharing an MQTT broker) is not in the HTTP API.
  entry(list, "Fleet peers", has(samples, "blegateway_mqtt_connected") ? "not reported over HTTP (see the broker's blegateway/+/status)" : "no fleet without MQTT", "muted");
}

function renderAdapters(adapters) {
  $("adapters").tBodies[0].replaceChildren(
    ...adapters.map((adapter) =>
      element("tr", { dataset: { adapter: adapter.name } }, [
        element("td", { textContent: adapter.alias && adapter.alias !== adapter.name ? `${adapter.name} (${adapter.alias})` : adapter.name }),
        element("td", { className: "mono", textContent: adapter.address || "" }),
        element("td", { textContent: adapter.state + (adapter.discovering ? ", scanning" : "") }),
        element("td", {}, [
          button(adapter.powered ? "Power off" : "Power on", async () => {
            await attempt($("operations-problem"), `Powering ${adapter.name} ${adapter.powered ? "off" : "on"}`, () =>
              api("PATCH", `/v1/adapters/${encodeURIComponent(adapter.name)}`, { powered: !adapter.powered }),
            );
            await refresh();
          }, { "aria-label": `${adapter.powered ? "Power off" : "Power on"} ${adapter.name}` }),
        ]),
      ]),
    ),
  );
  labelCells($("adapters"));
}

function renderMetrics(samples) {
  const now = Date.now();
  const current = figures(samples);
  const rate = previous && now > previous.time ? Math.max(0, (current.notifications - previous.notifications) / ((now - previous.time) / 1000)) : null;
  previous = { time: now, notifications: current.notifications };
  const list = $("metrics");
  list.replaceChildren();
  entry(list, "Connected devices", String(current.connected));
  entry(list, "Notifications per second", rate === null ? "measuring…" : rate.toFixed(1));
  entry(list, "Open streams", String(current.streams));
  entry(list, "D-Bus errors", String(current.dbusErrors));
  list.dataset.connected = String(current.connected);
  list.dataset.streams = String(current.streams);
}

export async function refresh() {
  const health = await fetch("/health").then((response) => response.json()).catch(() => null);
  const adapters = await attempt($("operations-problem"), "Listing the adapters", () => api("GET", "/v1/adapters"));
  let samples = [];
  try {
    samples = parseMetrics(await apiText("/metrics"));
    renderMetrics(samples);
  } catch (error) {
    $("metrics").replaceChildren(element("dd", { className: "muted", textContent: `Metrics unavailable: ${error.message}` }));
  }
  if (health) renderHealth(health, samples);
  if (adapters) renderAdapters(adapters);
}

export function shown() {
  refresh();
  clearInterval(timer);
  timer = setInterval(() => ($("operations").hidden ? clearInterval(timer) : refresh()), 5000);
}
