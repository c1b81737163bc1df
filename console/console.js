// The blegateway web console: plain JavaScript modules over the gateway's
// own public API (same origin), no framework and no build step. This
// module holds the page together: the API key, the views (chosen by the
// URL's fragment, so a reload comes back to the same place), and the one
// event stream (GET /v1/events) that keeps every view current and rebuilds
// the page after a reload by replaying this session's events.

import { api, apiKey, openStream, setApiKey } from "./console/api.js";
import * as device from "./console/device.js";
import * as devices from "./console/devices.js";
import * as operations from "./console/operations.js";
import * as pairing from "./console/pairing.js";
import * as peripheral from "./console/peripheral.js";
import { $ } from "./console/ui.js";
import * as unattended from "./console/unattended.js";

const logFromKey = "blegateway.logFrom";
let events = null;

// A failure of the console's own script is shown, not only logged.
let scriptErrors = 0;
function scriptFailed(message) {
  scriptErrors += 1;
  document.body.dataset.scriptErrors = String(scriptErrors);
  say(`The console hit an error of its own: ${message}`);
}
window.addEventListener("error", (event) => scriptFailed(event.message));
window.addEventListener("unhandledrejection", (event) => scriptFailed(String(event.reason && event.reason.message || event.reason)));

function say(text) {
  const message = $("message");
  message.textContent = text;
  message.hidden = !text;
}

// --- Views -----------------------------------------------------------------

const views = ["devices", "device", "peripheral", "unattended", "operations"];

function route() {
  let fragment = "";
  try {
    fragment = decodeURIComponent(location.hash.slice(1));
  } catch {
    // A malformed address: the default view.
  }
  const [view, argument] = fragment.split("/");
  return { view: views.includes(view) ? view : "devices", argument };
}

function openDevice(address) {
  location.hash = `#device/${address}`;
}

async function showView(moveFocus) {
  const { view, argument } = route();
  for (const name of views) $(name).hidden = name !== view;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const deviceLink = document.querySelector('nav a[data-view="device"]');
  const address = view === "device" ? argument || device.shownAddress() : device.shownAddress();
  deviceLink.href = address ? `#device/${address}` : "#device";
  if (moveFocus) $(`${view}-heading`).focus();
  if (view === "device") await device.show(address || null);
  else if (view === "peripheral") await peripheral.shown();
  else if (view === "unattended") await unattended.load();
  else if (view === "operations") operations.shown();
}

// --- The event stream ------------------------------------------------------

const deviceTypes = new Set(["device-discovered", "device-updated", "device-connected", "device-disconnected", "services-resolved"]);
const unattendedTypes = new Set(["reconnecting", "kept-connected", "given-up", "device-connected", "device-disconnected", "services-resolved"]);
let refreshTimer = null;

function onEvent(type, data, id) {
  if (typeof data !== "object" || data === null) return;
  if (!sessionStorage.getItem(logFromKey) && id) sessionStorage.setItem(logFromKey, String(Number(id) - 1));
  unattended.logEvent(type, data, id);
  const address = data.address || (data.device && data.device.address);
  if (deviceTypes.has(type) && data.device) devices.seen(data.device, type === "device-discovered" || type === "device-updated");
  if (type === "device-lost" && address) devices.lost(address);
  if (type === "pairing-request") pairing.request(data);
  if (/^pairing-request-/.test(type)) pairing.settled(data.id);
  if (unattendedTypes.has(type)) unattended.changed();
  if (type === "bluez-state" || type === "adapter-state") loadGateway();
  if (address && address === device.shownAddress() && type !== "device-updated" && type !== "characteristic-value") {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(device.refresh, 300);
  }
}

function followEvents(from) {
  if (events) events.close();
  const stored = sessionStorage.getItem(logFromKey);
  const lastEventId = from !== undefined ? from : stored !== null ? Number(stored) : undefined;
  events = openStream("/v1/events", onEvent, { reconnect: true, resume: true, lastEventId });
}

function replay(from) {
  sessionStorage.setItem(logFromKey, String(from));
  unattended.clearLog();
  followEvents(from);
}

// --- Start -----------------------------------------------------------------

async function loadGateway() {
  try {
    const info = await api("GET", "/v1");
    const bluez = info.bluez.available ? "BlueZ available" : "BlueZ unavailable";
    $("gateway-status").textContent = `version ${info.version} · ${bluez}${info.bluez.simulated ? " · simulated" : ""}`;
    return true;
  } catch (error) {
    $("gateway-status").textContent = error.status === 401 ? "this gateway needs its API key" : "gateway unreachable";
    if (error.status === 401) $("api-key").focus();
    return false;
  }
}

async function start() {
  say("");
  if (!(await loadGateway())) return;
  followEvents();
  await Promise.all([devices.load(), pairing.load()]);
  await showView(false);
}

devices.setup(openDevice);
device.setup();
pairing.setup();
peripheral.setup();
unattended.setup(replay);
$("api-key").value = apiKey();
$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  setApiKey($("api-key").value.trim());
  start();
});
window.addEventListener("hashchange", () => showView(true));
for (const name of views) $(`${name}-heading`).tabIndex = -1;
start();
