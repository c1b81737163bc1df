// The Unattended view: kept devices, standing subscriptions and the event
// log (filtered by type and device, replayed from the gateway's store).

import { api } from "./api.js";
import { $, attempt, button, element, labelCells, shortUUID } from "./ui.js";

const eventTypes = [
  "adapter-state", "adapter-updated", "device-discovered", "device-updated", "device-lost", "device-connected",
  "device-disconnected", "services-resolved", "characteristic-value", "bluez-state", "pairing-request",
  "pairing-request-answered", "pairing-request-expired", "pairing-request-cancelled", "pairing-succeeded",
  "pairing-failed", "device-unpaired", "reconnecting", "kept-connected", "given-up", "replay-gap", "gateway-stopping",
];
const logLimit = 500;
const entries = [];
let replay = () => {};
let refreshTimer = null;

// --- Kept devices and standing subscriptions -----------------------------

async function loadKept() {
  const kept = await attempt($("unattended-problem"), "Listing the kept devices", () => api("GET", "/v1/kept-connections"));
  if (!kept) return;
  $("kept").tBodies[0].replaceChildren(
    ...kept.map((item) =>
      element("tr", { dataset: { address: item.address } }, [
        element("td", { className: "mono", textContent: item.address }),
        element("td", { textContent: item.status }),
        element("td", { textContent: `${item.failed_attempts}${item.max_attempts ? ` of ${item.max_attempts}` : ""}` }),
        element("td", { textContent: item.last_reason || "" }),
        element("td", {}, [
          button("Stop keeping", async () => {
            await attempt($("unattended-problem"), `Releasing ${item.address}`, () => api("DELETE", `/v1/devices/${item.address}/keep`));
            await loadKept();
          }, { "aria-label": `Stop keeping ${item.address} connected` }),
        ]),
      ]),
    ),
  );
  if (!kept.length) $("kept").tBodies[0].append(emptyRow(5, "No kept device: Keep connected on a device's page."));
  labelCells($("kept"));
}

async function loadSubscriptions() {
  const subscriptions = await attempt($("unattended-problem"), "Listing the subscriptions", () => api("GET", "/v1/subscriptions"));
  if (!subscriptions) return;
  $("subscriptions").tBodies[0].replaceChildren(
    ...subscriptions.map((item) =>
      element("tr", { dataset: { id: String(item.id) } }, [
        element("td", { textContent: String(item.id) }),
        element("td", { className: "mono", textContent: item.device }),
        element("td", { className: "mono", textContent: `${shortUUID(item.characteristic)} (${item.mode})` }),
        element("td", { textContent: item.status }),
        element("td", { textContent: item.last_reason || "" }),
        element("td", {}, [
          button("End", async () => {
            await attempt($("unattended-problem"), `Ending subscription ${item.id}`, () => api("DELETE", `/v1/subscriptions/${item.id}`));
            await loadSubscriptions();
          }, { "aria-label": `End subscription ${item.id}` }),
        ]),
      ]),
    ),
  );
  if (!subscriptions.length) $("subscriptions").tBodies[0].append(emptyRow(6, "No standing subscription."));
  labelCells($("subscriptions"));
}

const emptyRow = (columns, text) => element("tr", {}, [element("td", { colSpan: columns, className: "note", textContent: text })]);

async function subscribe(event) {
  event.preventDefault();
  const body = {
    device: $("subscribe-device").value.trim(),
    characteristic: $("subscribe-characteristic").value.trim(),
    mode: $("subscribe-mode").value,
  };
  if (await attempt($("unattended-problem"), "Subscribing", () => api("POST", "/v1/subscriptions", body))) await loadSubscriptions();
}

let pollTimer = null;

/// Reads both tables, and again every 5 s while the view is open (a
/// subscription turns active without an event of its own).
export function load() {
  clearInterval(pollTimer);
  pollTimer = setInterval(() => ($("unattended").hidden ? clearInterval(pollTimer) : changed()), 5000);
  return Promise.all([loadKept(), loadSubscriptions()]);
}

/// Something changed that the tables show: read them again, at most twice a second.
export function changed() {
  if (refreshTimer || $("unattended").hidden) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    loadKept();
    loadSubscriptions();
  }, 500);
}

// --- The event log -----------------------------------------------------------

function subject(data) {
  return data.address || (data.device && data.device.address) || data.adapter || "";
}

function summary(type, data) {
  const parts = [];
  if (data.device && data.device.name) parts.push(data.device.name);
  if (data.state) parts.push(data.state);
  if (data.kind) parts.push(data.kind);
  if (data.characteristic) parts.push(shortUUID(data.characteristic));
  if (data.value !== undefined) parts.push(data.value);
  if (typeof data.attempt === "number") parts.push(`attempt ${data.attempt}`);
  if (typeof data.attempts === "number") parts.push(`${data.attempts} attempts`);
  if (data.reason) parts.push(data.reason);
  if (data.detail) parts.push(data.detail);
  if (type === "replay-gap") parts.push(`events ${data.last_event_id + 1} to ${data.oldest_available - 1} are no longer stored`);
  return parts.join(" · ");
}

export function logEvent(type, data, id) {
  const entry = { type, data, id, address: subject(data).toUpperCase() };
  entries.push(entry);
  if (entries.length > logLimit) entries.shift();
  if (matches(entry)) {
    const log = $("events");
    log.prepend(item(entry));
    while (log.children.length > logLimit) log.lastElementChild.remove();
  }
}

function matches(entry) {
  // By default the log leaves out advertisement updates, which would
  // drown everything else while a scan runs.
  const type = $("log-type").value;
  const device = $("log-device").value.trim().toUpperCase().replace(/-/g, ":");
  const typeMatches = type === "" ? entry.type !== "device-updated" : type === "all" || entry.type === type;
  return typeMatches && (!device || entry.address.includes(device));
}

function item(entry) {
  const when = entry.data.timestamp ? new Date(entry.data.timestamp).toLocaleTimeString() : "";
  return element("li", { dataset: { type: entry.type, id: entry.id || "" } }, [
    element("span", { className: "id", textContent: entry.id ? `#${entry.id}` : "" }),
    " ",
    element("time", { textContent: when }),
    " ",
    element("span", { className: "type", textContent: entry.type }),
    " ",
    element("span", { className: "mono", textContent: subject(entry.data) }),
    " ",
    element("span", { textContent: summary(entry.type, entry.data) }),
  ]);
}

function renderLog() {
  $("events").replaceChildren(...entries.filter(matches).reverse().map(item));
}

export function clearLog() {
  entries.length = 0;
  $("events").replaceChildren();
}

export function setup(onReplay) {
  replay = onReplay;
  $("log-type").append(element("option", { value: "all", textContent: "every type" }));
  for (const type of eventTypes) $("log-type").append(element("option", { value: type, textContent: type }));
  $("log-type").addEventListener("change", renderLog);
  $("log-device").addEventListener("input", renderLog);
  $("log-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    replay(Number($("log-from").value) || 0);
  });
  $("subscribe-form").addEventListener("submit", subscribe);
}
