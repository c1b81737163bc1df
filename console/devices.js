// The Devices view: every device the gateway knows, live from scans and
// the event log, sortable and filterable, with its advertisements decoded.

import { api, openStream } from "./api.js";
import { describeDecoded, looksConnectable, rawData } from "./decode.js";
import { $, attempt, button, element, relativeTime, report, shortUUID, sortable, sparkline } from "./ui.js";

const settingsKey = "blegateway.deviceList";
const scanningKey = "blegateway.scanning";
const entries = new Map();
const settings = Object.assign(
  { key: "name", descending: false, text: "", service: "", connectable: false },
  JSON.parse(localStorage.getItem(settingsKey) || "{}"),
);
let scan = null;
let renderTimer = null;
let markSort = () => {};
let openDevice = () => {};

function saveSettings() {
  localStorage.setItem(settingsKey, JSON.stringify(settings));
}

/// A report of a device (a scan event, an event of the log, a listing).
export function seen(device, heard = true) {
  let entry = entries.get(device.address);
  if (!entry) {
    entry = { rssi: [], row: null, lost: false };
    entries.set(device.address, entry);
  }
  entry.device = Object.assign(entry.device || {}, device);
  if (heard) entry.lost = false;
  if (device.last_seen) entry.lastSeen = new Date(device.last_seen);
  else if (heard && !entry.lastSeen) entry.lastSeen = new Date();
  if (heard && typeof device.rssi === "number" && device.rssi !== 127) {
    entry.rssi.push(device.rssi);
    if (entry.rssi.length > 30) entry.rssi.shift();
  }
  scheduleRender();
}

export function lost(address) {
  const entry = entries.get(address);
  if (!entry) return;
  entry.lost = true;
  scheduleRender();
}

export function forgotten(address) {
  const entry = entries.get(address);
  if (entry && entry.row) entry.row.remove();
  entries.delete(address);
  scheduleRender();
}

export function known(address) {
  const entry = entries.get(address);
  return entry ? entry.device : null;
}

function scheduleRender() {
  if (renderTimer) return;
  renderTimer = setTimeout(() => {
    renderTimer = null;
    render();
  }, 150);
}

function matches(entry) {
  const device = entry.device;
  const text = settings.text.trim().toLowerCase();
  if (text) {
    const haystack = `${device.name || ""} ${device.alias || ""} ${device.address}`.toLowerCase();
    const compact = device.address.replace(/:/g, "").toLowerCase();
    if (!haystack.includes(text) && !compact.includes(text.replace(/[:-]/g, ""))) return false;
  }
  const service = shortUUID(settings.service.trim().toLowerCase().replace(/^0x/, ""));
  if (service) {
    const uuids = [...(device.service_uuids || []), ...Object.keys(device.service_data || {})].map(shortUUID);
    if (!uuids.includes(service)) return false;
  }
  return !settings.connectable || looksConnectable(device);
}

function compare(a, b) {
  const sign = settings.descending ? -1 : 1;
  if (settings.key === "rssi") return sign * ((a.device.rssi ?? -200) - (b.device.rssi ?? -200));
  if (settings.key === "seen") return sign * ((a.lastSeen?.getTime() ?? 0) - (b.lastSeen?.getTime() ?? 0));
  const name = (entry) => (entry.device.name || entry.device.alias || entry.device.address).toLowerCase();
  return sign * name(a).localeCompare(name(b));
}

const label = (device) => device.name || device.alias || device.address;

// A device without a name is called what its advertisement says it is
// (BlueZ's alias of such a device is only its address again).
function unnamed(device) {
  const format = ((device.decoded || [])[0] || {}).format || "";
  if (format.startsWith("eddystone")) return "Eddystone beacon";
  return { ibeacon: "iBeacon", bthome: "BTHome sensor" }[format] || "(no name)";
}

function fillRow(entry) {
  const device = entry.device;
  if (!entry.row) {
    entry.row = element("tr", { dataset: { address: device.address } });
    entry.cells = ["name", "address", "rssi", "data", "seen"].map((name) =>
      element("td", { className: name, dataset: { label: { seen: "Last seen", rssi: "RSSI", data: "Data" }[name] || "" } }),
    );
    entry.open = button("Open", () => openDevice(device.address));
    entry.row.append(...entry.cells, element("td", { className: "actions" }, [entry.open]));
  }
  const [nameCell, addressCell, rssiCell, dataCell, seenCell] = entry.cells;
  const states = [device.connected ? "connected" : null, device.paired ? "paired" : null].filter(Boolean);
  nameCell.replaceChildren(
    device.name ? element("strong", { textContent: device.name }) : element("span", { className: "unnamed", textContent: unnamed(device) }),
    ...states.map((state) => element("span", { className: `badge ${state}`, textContent: state })),
  );
  addressCell.textContent = device.address;
  addressCell.className = "address mono";
  const rssi = typeof device.rssi === "number" && device.rssi !== 127 ? `${device.rssi} dBm` : "—";
  rssiCell.replaceChildren(rssi, sparkline(entry.rssi, `RSSI history of ${label(device)}`));
  const decoded = (device.decoded || []).map((frame) => element("li", { className: "decoded", textContent: describeDecoded(frame) }));
  const services = (device.service_uuids || []).map(shortUUID);
  const raw = rawData(device).map((line) => element("li", { className: "raw mono", textContent: line }));
  if (services.length) raw.unshift(element("li", { className: "raw", textContent: `services ${services.join(", ")}` }));
  dataCell.replaceChildren(element("ul", { className: "plain" }, [...decoded, ...raw]));
  seenCell.replaceChildren(
    element("span", { className: `presence ${entry.lost ? "lost" : "present"}`, textContent: entry.lost ? "lost" : "present" }),
    " ",
    element("time", { textContent: relativeTime(entry.lastSeen), dateTime: entry.lastSeen ? entry.lastSeen.toISOString() : "" }),
  );
  entry.open.setAttribute("aria-label", `Open ${label(device)}`);
  entry.row.classList.toggle("lost", entry.lost);
}

function render(reorder = false) {
  const body = $("device-table").tBodies[0];
  const shown = [...entries.values()].filter(matches).sort(compare);
  for (const entry of entries.values()) fillRow(entry);
  const wanted = shown.map((entry) => entry.row);
  const current = [...body.children];
  // Rows do not move under the pointer or the keyboard focus: while the
  // table is hovered or focused, only a new sort or a change of which
  // rows are shown reorders them.
  const table = $("device-table");
  const held = table.matches(":hover") || table.matches(":focus-within");
  const sameRows = wanted.length === current.length && wanted.every((row) => row.parentNode === body);
  const sameOrder = sameRows && wanted.every((row, index) => row === current[index]);
  if (!sameOrder && (reorder || !held || !sameRows)) body.replaceChildren(...wanted);
  $("devices-empty").hidden = shown.length > 0;
  $("devices-empty").textContent = entries.size ? "No device matches the filters." : "No devices yet: start a scan.";
  markSort();
}

// --- Scanning ----------------------------------------------------------

function scanPath() {
  const service = settings.service.trim();
  return `/v1/scan?presence_timeout_ms=30000${service ? `&service=${encodeURIComponent(service)}` : ""}`;
}

function startScan() {
  stopScan(false);
  sessionStorage.setItem(scanningKey, "1");
  const toggle = $("scan-toggle");
  toggle.textContent = "Stop scan";
  toggle.setAttribute("aria-pressed", "true");
  $("scan-state").textContent = settings.service.trim() ? `scanning for ${settings.service.trim()}…` : "scanning…";
  scan = openStream(
    scanPath(),
    (type, data) => {
      if (type === "discovered" || type === "updated") seen(data.device);
      else if (type === "lost") lost(data.device.address);
      else if (type === "scan-interrupted") $("scan-state").textContent = `scan interrupted: ${data.reason}`;
      else if (type === "scan-resumed") $("scan-state").textContent = "scanning…";
    },
    {
      reconnect: true,
      onProblem: (problem) => {
        report($("devices-problem"), problem, "Scanning");
        stopScan();
      },
    },
  );
}

function stopScan(forget = true) {
  if (scan) scan.close();
  scan = null;
  if (forget) sessionStorage.removeItem(scanningKey);
  const toggle = $("scan-toggle");
  toggle.textContent = "Start scan";
  toggle.setAttribute("aria-pressed", "false");
  $("scan-state").textContent = "";
}

/// Lists what BlueZ knows (connected and paired devices first of all), so
/// a reload shows them before any scan.
export async function load() {
  const devices = await attempt($("devices-problem"), "Listing the devices", () => api("GET", "/v1/devices"));
  for (const device of devices || []) seen(device, false);
  if (sessionStorage.getItem(scanningKey) && !scan) startScan();
}

export function setup(open) {
  openDevice = open;
  $("filter-text").value = settings.text;
  $("filter-service").value = settings.service;
  $("filter-connectable").checked = settings.connectable;
  markSort = sortable($("device-table"), settings, () => {
    saveSettings();
    render(true);
  });
  $("scan-toggle").addEventListener("click", () => (scan ? stopScan() : startScan()));
  $("device-filters").addEventListener("submit", (event) => event.preventDefault());
  $("filter-text").addEventListener("input", () => {
    settings.text = $("filter-text").value;
    saveSettings();
    render();
  });
  $("filter-connectable").addEventListener("change", () => {
    settings.connectable = $("filter-connectable").checked;
    saveSettings();
    render();
  });
  // A service typed during a scan narrows the scan itself (BlueZ's
  // discovery filter) as well as the list.
  let restart = null;
  $("filter-service").addEventListener("input", () => {
    settings.service = $("filter-service").value;
    saveSettings();
    render();
    clearTimeout(restart);
    restart = setTimeout(() => scan && startScan(), 600);
  });
  setInterval(() => entries.size && render(), 5000);
}
