// The Device view: one device's state and actions, its GATT tree, and a
// characteristic's read, write and notifications (a live plot and a table
// of recent values).

import { api, device as devicePath, openStream } from "./api.js";
import { defaultFormat, describeDecoded, formats, parseValue, rawData } from "./decode.js";
import * as devices from "./devices.js";
import { $, attempt, button, drawPlot, element, labelCells, note, report, shortUUID } from "./ui.js";

let address = null;
let current = null; // the device as the API last gave it
let target = null; // { service, characteristic, label }
let notifications = null;
let points = [];
let busy = false;

const path = (suffix = "") => `${devicePath(address)}${suffix}`;
const problemNode = () => $("device-problem");
const label = (device) => device.name || device.alias || device.address;

export function shownAddress() {
  return address;
}

export async function show(newAddress) {
  if (newAddress !== address) {
    stopNotifications();
    address = newAddress;
    current = null;
    target = null;
    $("characteristic").hidden = true;
    $("gatt").replaceChildren();
    report(problemNode(), null);
  }
  $("device-none").hidden = Boolean(address);
  $("device-body").hidden = !address;
  if (address) await refresh();
}

/// Reads the device again (after an action, or an event about it).
export async function refresh() {
  if (!address) return;
  const which = address;
  let device;
  try {
    device = await api("GET", path());
  } catch (error) {
    if (which !== address) return;
    if (error.status === 404) {
      current = null;
      $("device-heading").textContent = `Device ${address}`;
      $("device-facts").textContent = "BlueZ does not list this device now (forgotten, or not heard lately). Connect looks for it.";
      $("gatt").replaceChildren();
      $("characteristic").hidden = true;
      setButtons({ connected: false, paired: false }, false);
      return;
    }
    report(problemNode(), error, "Reading the device");
    return;
  }
  if (which !== address) return;
  const wasResolved = current && current.services_resolved;
  current = device;
  devices.seen(device, false);
  $("device-heading").textContent = label(device);
  const facts = [
    device.address,
    device.address_type ? `${device.address_type} address` : null,
    device.connected ? "connected" : "not connected",
    device.paired ? "paired" : "not paired",
    device.bonded ? "bonded" : null,
    device.trusted ? "trusted" : null,
    typeof device.rssi === "number" && device.rssi !== 127 ? `${device.rssi} dBm` : null,
    device.mtu ? `MTU ${device.mtu}` : null,
  ].filter(Boolean);
  $("device-facts").textContent = facts.join(" · ");
  const advertised = [...(device.decoded || []).map(describeDecoded), ...rawData(device)];
  $("device-advertised").replaceChildren(
    ...(advertised.length ? [element("ul", { className: "plain" }, advertised.map((line) => element("li", { textContent: line })))] : []),
  );
  const keptDevices = await api("GET", "/v1/kept-connections").catch(() => []);
  const kept = keptDevices.find((item) => item.address === device.address) || null;
  setButtons(device, kept);
  if (device.connected && device.services_resolved) {
    if (!wasResolved || !$("gatt").children.length) await loadServices();
  } else {
    $("gatt").replaceChildren(element("p", { className: "note", textContent: "Connect to see its services." }));
    $("characteristic").hidden = true;
    stopNotifications();
  }
}

function setButtons(device, kept) {
  $("device-state").textContent = busy ? $("device-state").textContent : "";
  $("device-connect").disabled = busy || device.connected;
  $("device-disconnect").disabled = busy || !device.connected;
  $("device-pair").disabled = busy || device.paired;
  $("device-unpair").disabled = busy || !device.paired;
  $("device-forget").disabled = busy || !current;
  const keep = $("device-keep");
  keep.setAttribute("aria-pressed", kept ? "true" : "false");
  keep.textContent = kept ? "Stop keeping connected" : "Keep connected";
  keep.title = kept ? `kept: ${kept.status}, ${kept.failed_attempts} failed attempts${kept.last_reason ? `, last: ${kept.last_reason}` : ""}` : "";
  keep.disabled = busy;
}

async function action(name, progress, work) {
  busy = true;
  $("device-state").textContent = progress;
  for (const control of $("device-actions").querySelectorAll("button")) control.disabled = true;
  await attempt(problemNode(), name, work);
  busy = false;
  $("device-state").textContent = "";
  await refresh();
}

// --- GATT tree -------------------------------------------------------------

async function loadServices() {
  const services = await attempt(problemNode(), "Listing the services", () => api("GET", path("/services")));
  if (!services) return;
  $("gatt").replaceChildren(
    ...services.map((service) =>
      element("details", { open: true, className: "service" }, [
        element("summary", {}, [
          `${service.name || "Unknown service"} `,
          element("span", { className: "uuid mono", textContent: shortUUID(service.uuid) }),
        ]),
        element("ul", { className: "plain" }, service.characteristics.map((characteristic) => characteristicItem(service, characteristic))),
      ]),
    ),
  );
}

function characteristicItem(service, characteristic) {
  const short = shortUUID(characteristic.uuid);
  const name = element("span", { className: "name", textContent: characteristic.name || "Unknown characteristic" });
  const descriptors = element(
    "ul",
    { className: "descriptors plain" },
    characteristic.descriptors.map((descriptor) =>
      element("li", { dataset: { uuid: shortUUID(descriptor.uuid) } }, [
        element("span", { textContent: descriptor.name || "Descriptor" }),
        " ",
        element("span", { className: "uuid mono", textContent: `${shortUUID(descriptor.uuid)} · handle ${descriptor.handle}` }),
      ]),
    ),
  );
  const open = button("Open", () => openCharacteristic(service, characteristic, name.textContent), {
    "aria-label": `Open ${characteristic.name || short}`,
  });
  const item = element("li", { className: "characteristic", dataset: { uuid: short } }, [
    element("div", { className: "row" }, [
      name,
      element("span", { className: "uuid mono", textContent: `${short} · handle ${characteristic.handle}` }),
      element("span", { className: "flags", textContent: characteristic.flags.join(", ") }),
      open,
    ]),
    descriptors,
  ]);
  // A user description (0x2901) names a characteristic the assigned
  // numbers do not know; it is the device's text, shown as text.
  if (characteristic.descriptors.some((descriptor) => shortUUID(descriptor.uuid) === "2901")) {
    api("GET", path(`/characteristics/handle:${characteristic.handle}/descriptors/2901/value?encoding=utf8`))
      .then((result) => {
        const text = result.encoding === "utf8" ? result.value : `0x${result.value}`;
        const entry = descriptors.querySelector('li[data-uuid="2901"]');
        if (entry) entry.append(element("q", { className: "description", textContent: text }));
        if (!characteristic.name) name.textContent = text;
        open.setAttribute("aria-label", `Open ${text}`);
      })
      .catch(() => {});
  }
  return item;
}

// --- One characteristic --------------------------------------------------

function characteristicPath(suffix) {
  return path(`/characteristics/handle:${target.characteristic.handle}${suffix}`);
}

function openCharacteristic(service, characteristic, name) {
  stopNotifications();
  target = { service, characteristic, label: name };
  const flags = characteristic.flags;
  const can = (flag) => flags.includes(flag);
  $("characteristic").hidden = false;
  $("characteristic-heading").textContent = name;
  $("characteristic-target").textContent =
    `${shortUUID(characteristic.uuid)} in ${service.name || shortUUID(service.uuid)} · handle ${characteristic.handle} · ${flags.join(", ")}`;
  $("value-read").disabled = !can("read");
  $("value-write").disabled = !(can("write") || can("write-without-response"));
  $("write-type").value = can("write") ? "request" : "command";
  $("value-notify").disabled = !(can("notify") || can("indicate"));
  $("notify-format").value = defaultFormat(characteristic.uuid);
  $("read-output").textContent = "";
  report($("characteristic-problem"), null);
  points = [];
  $("recent-values").tBodies[0].replaceChildren();
  drawPlot($("plot"), points);
  $("plot-caption").textContent = "No notifications yet.";
  $("characteristic").scrollIntoView({ block: "nearest" });
}

async function read(event) {
  event.preventDefault();
  const encoding = $("read-encoding").value;
  const output = $("read-output");
  output.textContent = "reading…";
  // A read that needs pairing pairs first (?pair=auto): the pairing dialog
  // asks whatever the device's method needs, so the read never waits
  // without saying why.
  const slow = setTimeout(() => (output.textContent = "still waiting: the device may be pairing (see the dialog)…"), 1500);
  const result = await attempt($("characteristic-problem"), `Reading ${target.label}`, () =>
    api("GET", characteristicPath(`/value?encoding=${encoding}&pair=auto`)),
  );
  clearTimeout(slow);
  output.textContent = result ? `${result.value} (${result.encoding === "utf8" ? "UTF-8" : result.encoding})` : "";
  if (result) addRecent(result.encoding === "hex" ? result.value : "", result.encoding === "hex" ? null : result.value);
  // A read may have paired the device on the way.
  if (result) refresh();
}

async function write(event) {
  event.preventDefault();
  const body = { value: $("write-value").value, encoding: $("write-encoding").value, type: $("write-type").value };
  const output = $("read-output");
  output.textContent = "writing…";
  const done = await attempt($("characteristic-problem"), `Writing ${target.label}`, () =>
    api("PUT", characteristicPath("/value?pair=auto"), body),
  );
  output.textContent = done === undefined ? "" : `written ${body.value} (${body.encoding === "utf8" ? "UTF-8" : "hex"}, ${body.type === "request" ? "with" : "without"} response)`;
}

function addRecent(hex, text) {
  const format = $("notify-format").value;
  const parsed = hex ? parseValue(format, hex) : NaN;
  const unit = formats[format].unit || "";
  const row = element("tr", {}, [
    element("td", { textContent: new Date().toLocaleTimeString() }),
    element("td", { className: "mono", textContent: hex || text }),
    element("td", { textContent: Number.isNaN(parsed) ? "—" : `${+parsed.toFixed(3)}${unit ? ` ${unit}` : ""}` }),
  ]);
  const body = $("recent-values").tBodies[0];
  body.prepend(row);
  while (body.children.length > 20) body.lastElementChild.remove();
  labelCells($("recent-values"));
  return parsed;
}

function toggleNotifications(event) {
  event.preventDefault();
  if (notifications) return stopNotifications();
  const toggle = $("value-notify");
  toggle.textContent = "Stop notifications";
  toggle.setAttribute("aria-pressed", "true");
  points = [];
  drawPlot($("plot"), points);
  const label = target.label;
  notifications = openStream(
    characteristicPath("/notifications"),
    (type, data) => {
      if (type === "notification") {
        const value = addRecent(data.value, null);
        if (!Number.isNaN(value)) {
          points.push(value);
          if (points.length > 120) points.shift();
          drawPlot($("plot"), points);
          const unit = formats[$("notify-format").value].unit || "";
          $("plot-caption").textContent = `Last value: ${+value.toFixed(3)}${unit ? ` ${unit}` : ""} (${points.length} plotted)`;
        } else {
          $("plot-caption").textContent = `Last value ${data.value} does not parse as ${$("notify-format").value}.`;
        }
      } else if (type === "subscription-interrupted") {
        note($("characteristic-problem"), `Notifications paused: ${data.reason}${data.detail ? ` (${data.detail})` : ""}.`);
      } else if (type === "subscription-resumed") {
        note($("characteristic-problem"), "");
      } else if (type === "subscription-ended") {
        note($("characteristic-problem"), `Notifications of ${label} ended: ${data.reason}${data.detail ? ` (${data.detail})` : ""}.`);
        stopNotifications();
      }
    },
    {
      onProblem: (problem) => {
        report($("characteristic-problem"), problem, `Subscribing to ${label}`);
        stopNotifications();
      },
      onEnd: () => stopNotifications(),
    },
  );
  return undefined;
}

function stopNotifications() {
  if (notifications) notifications.close();
  notifications = null;
  const toggle = $("value-notify");
  toggle.textContent = "Notify";
  toggle.setAttribute("aria-pressed", "false");
}

export function setup() {
  for (const [name, format] of Object.entries(formats)) $("notify-format").append(element("option", { value: name, textContent: format.label }));
  $("device-connect").addEventListener("click", () =>
    action(`Connecting ${address}`, "connecting…", () => api("POST", path("/connect?timeout_ms=30000"))),
  );
  $("device-disconnect").addEventListener("click", () => {
    stopNotifications();
    return action(`Disconnecting ${address}`, "disconnecting…", () => api("POST", path("/disconnect")));
  });
  $("device-keep").addEventListener("click", () => {
    const kept = $("device-keep").getAttribute("aria-pressed") === "true";
    return kept
      ? action(`Releasing ${address}`, "releasing…", () => api("DELETE", path("/keep")))
      : action(`Keeping ${address} connected`, "keeping…", () => api("PUT", path("/keep"), {}));
  });
  $("device-pair").addEventListener("click", () =>
    action(`Pairing ${address}`, "pairing: answer the dialog if it asks…", () => api("POST", path("/pair?timeout_ms=60000"))),
  );
  $("device-unpair").addEventListener("click", () => {
    stopNotifications();
    return action(`Unpairing ${address}`, "unpairing…", () => api("DELETE", path("/pair")));
  });
  $("device-forget").addEventListener("click", async () => {
    stopNotifications();
    const which = address;
    await action(`Forgetting ${which}`, "forgetting…", () => api("DELETE", path()));
    devices.forgotten(which);
  });
  $("read-form").addEventListener("submit", read);
  $("write-form").addEventListener("submit", write);
  $("notify-form").addEventListener("submit", toggleNotifications);
}
