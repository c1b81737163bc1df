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

const sum = (samples, test) => samples.filter(test).reduce((total, sample) => total + sample.value, 0);
const has = (samples, test) => samples.some(test);

function figures(samples) {
  const name = (pattern) => (sample) => pattern.test(sample.name);
  const notificationCounter = has(samples, name(/notifications_total$/))
    ? name(/notifications_total$/)
    : (sample) => /events_total$/.test(sample.name) && sample.labels.type === "characteristic-value";
  return {
    connected: sum(samples, name(/^blegateway_devices_connected$/)),
    notifications: sum(samples, notificationCounter),
    streams: sum(samples, name(/open_streams$/)),
    dbusErrors: sum(samples, name(/dbus_call_errors_total$/)),
  };
}

function entry(list, term, description, state) {
  list.append(element("dt", { textContent: term }), element("dd", { className: state || "", textContent: description }));
}

function renderHealth(health, samples) {
  const list = $("health");
  list.replaceChildren();
  const bluetoothd = { "bluetoothd-unavailable": ["not running", "bad"], "bus-unavailable": ["unknown (no bus)", "bad"] }[health.state] || ["running", "good"];
  entry(list, "Overall", `${health.status}: ${health.detail}`, health.status === "ok" ? "good" : health.status === "degraded" ? "warn" : "bad");
  entry(list, "bluetoothd", bluetoothd[0], bluetoothd[1]);
  entry(list, "D-Bus", health.state === "bus-unavailable" ? "connection lost, reconnecting" : "connected", health.state === "bus-unavailable" ? "bad" : "good");
  entry(list, "Adapters", health.adapters.map((adapter) => `${adapter.id} ${adapter.state}`).join(", ") || "none", health.adapters.some((a) => a.state === "powered-on") ? "good" : "bad");
  // The store, the MQTT bridge and the fleet report through metrics when
  // the gateway exports them.
  const about = (pattern) => samples.filter((sample) => pattern.test(sample.name));
  const describe = (found) => found.map((sample) => `${sample.name.replace(/^blegateway_/, "")}${Object.keys(sample.labels).length ? `{${Object.entries(sample.labels).map(([k, v]) => `${k}=${v}`).join(",")}}` : ""} ${sample.value}`).join(", ");
  for (const [term, pattern] of [["State store", /store/], ["MQTT broker", /mqtt/], ["Fleet peers", /fleet|peer/]]) {
    const found = about(pattern);
    entry(list, term, found.length ? describe(found) : "not reported by this gateway", found.length ? "" : "muted");
  }
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
