// The Peripheral view: publish GATT services (from a form or JSON),
// advertise, watch centrals and their requests live, answer delegated
// requests, and update values (which notifies subscribed centrals).

import { api, openStream } from "./api.js";
import { $, attempt, button, element, field, labelCells, note, report, shortUUID } from "./ui.js";

const flagChoices = ["read", "write", "write-without-response", "notify", "indicate"];
const attErrors = [
  [0x02, "Read not permitted"], [0x03, "Write not permitted"], [0x06, "Request not supported"],
  [0x07, "Invalid offset"], [0x08, "Insufficient authorization"], [0x0d, "Invalid attribute value length"],
  [0x0e, "Unlikely error"], [0x80, "Application error 0x80"],
];
const centrals = new Map();
const fromKey = "blegateway.peripheralFrom";
// Requests this tab answered: a replay after a reload does not ask again.
const answeredKey = "blegateway.answeredRequests";
const answered = new Set(JSON.parse(sessionStorage.getItem(answeredKey) || "[]"));
let stream = null;

// --- Publishing ----------------------------------------------------------

function characteristicRow(values) {
  const uuid = element("input", { value: values.uuid || "", size: 8, spellcheck: false, required: true });
  const value = element("input", { value: values.value || "", size: 10, spellcheck: false, placeholder: "hex" });
  const delegate = element("input", { type: "checkbox", checked: Boolean(values.delegate) });
  const flags = flagChoices.map((flag) => {
    const box = element("input", { type: "checkbox", value: flag, checked: (values.flags || []).includes(flag) });
    return element("label", { className: "check" }, [box, ` ${flag}`]);
  });
  const row = element("div", { className: "characteristic-row" }, [
    field("UUID", uuid),
    element("span", { className: "flag-boxes", role: "group", "aria-label": "Flags" }, flags),
    field("Value (hex)", value),
    element("label", { className: "check" }, [delegate, " answered here (delegate)"]),
  ]);
  row.append(button("Remove", () => row.remove(), { "aria-label": "Remove this characteristic" }));
  row.read = () => {
    const characteristic = {
      uuid: uuid.value.trim(),
      flags: flags.map((label) => label.firstChild).filter((box) => box.checked).map((box) => box.value),
    };
    if (value.value.trim()) characteristic.value = value.value.trim();
    if (delegate.checked) characteristic.delegate = true;
    return characteristic;
  };
  return row;
}

function formApplication() {
  const rows = [...$("publish-characteristics").querySelectorAll(".characteristic-row")];
  return { services: [{ uuid: $("publish-service").value.trim(), characteristics: rows.map((row) => row.read()) }] };
}

async function publish(event) {
  event.preventDefault();
  const json = $("publish-json").value.trim();
  let body;
  if ($("publish-json-details").open && json) {
    try {
      body = JSON.parse(json);
    } catch (error) {
      note($("publish-problem"), `The JSON does not parse: ${error.message}.`);
      $("publish-problem").className = "problem";
      return;
    }
  } else {
    body = formApplication();
  }
  const published = await attempt($("publish-problem"), "Publishing the service", () => api("POST", "/v1/peripheral/applications", body));
  if (published) {
    follow();
    await loadApplications();
    note($("publish-problem"), `Published ${published.id}.`);
  }
}

async function loadApplications() {
  const applications = await attempt($("publish-problem"), "Listing the applications", () =>
    api("GET", "/v1/peripheral/applications"),
  );
  if (!applications) return;
  if (applications.length) follow();
  $("applications").replaceChildren(
    ...(applications.length ? applications.map(applicationCard) : [element("p", { className: "note", textContent: "None." })]),
  );
}

function applicationCard(application) {
  const problem = element("p", { hidden: true });
  const items = [];
  for (const service of application.services) {
    for (const characteristic of service.characteristics) {
      const input = element("input", { value: characteristic.value, size: 12, spellcheck: false });
      const states = [characteristic.notifying ? "centrals subscribed" : null, characteristic.delegate ? "answered here" : null].filter(Boolean);
      const form = element("form", { className: "controls", autocomplete: "off" }, [
        element("span", { className: "mono", textContent: `${shortUUID(service.uuid)} / ${shortUUID(characteristic.uuid)}` }),
        element("span", { className: "flags", textContent: characteristic.flags.join(", ") }),
        ...states.map((state) => element("span", { className: "badge", textContent: state })),
        field(`Value of ${shortUUID(characteristic.uuid)} (${characteristic.encoding})`, input),
        element("button", { type: "submit", textContent: "Update value" }),
      ]);
      form.dataset.characteristic = shortUUID(characteristic.uuid);
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const path = `/v1/peripheral/applications/${application.id}/characteristics/${shortUUID(characteristic.uuid)}/value?service=${shortUUID(service.uuid)}`;
        const result = await attempt(problem, `Updating ${shortUUID(characteristic.uuid)}`, () =>
          api("PUT", path, { value: input.value.trim(), encoding: characteristic.encoding }),
        );
        if (result) note(problem, result.notified ? "Stored and sent to the subscribed centrals." : "Stored (no central subscribed).");
      });
      items.push(element("li", {}, [form]));
    }
  }
  const unpublish = button("Unpublish", async () => {
    if (await attempt(problem, `Unpublishing ${application.id}`, () => api("DELETE", `/v1/peripheral/applications/${application.id}`)) !== undefined) {
      await loadApplications();
    }
  }, { "aria-label": `Unpublish ${application.id}` });
  return element("article", { className: "panel application", dataset: { id: application.id } }, [
    element("h4", { textContent: `${application.id} on ${application.adapter} · ${application.registered ? "registered" : "not registered"}` }),
    element("ul", { className: "plain" }, items),
    element("p", { className: "controls" }, [unpublish]),
    problem,
  ]);
}

// --- Advertising -----------------------------------------------------------

function showKind() {
  const kind = $("advertise-kind").value;
  for (const label of $("advertise-form").querySelectorAll("[data-kind]")) label.hidden = label.dataset.kind !== kind;
}

async function advertise(event) {
  event.preventDefault();
  const kind = $("advertise-kind").value;
  let body;
  if (kind === "ibeacon") {
    body = { ibeacon: { uuid: $("ibeacon-uuid").value.trim(), major: Number($("ibeacon-major").value), minor: Number($("ibeacon-minor").value) } };
  } else if (kind === "eddystone") {
    body = { eddystone_url: $("eddystone-url").value.trim() };
  } else {
    const uuids = $("advertise-uuids").value.split(",").map((uuid) => uuid.trim()).filter(Boolean);
    body = { local_name: $("advertise-name").value, service_uuids: uuids };
  }
  const started = await attempt($("advertise-problem"), "Starting the advertisement", () => api("POST", "/v1/peripheral/advertisements", body));
  if (!started) return;
  await loadAdvertisements();
  note($("advertise-problem"), `Advertising as ${started.id} (${started.data_length} of 31 bytes).`);
}

async function loadAdvertisements() {
  const [advertisements, capacity] = await Promise.all([
    attempt($("advertise-problem"), "Listing the advertisements", () => api("GET", "/v1/peripheral/advertisements")),
    api("GET", "/v1/peripheral/advertising").catch(() => null),
  ]);
  $("advertising-capacity").textContent = capacity ? `${capacity.active_instances} of ${capacity.supported_instances} advertising slots in use` : "";
  if (!advertisements) return;
  $("advertisements").replaceChildren(
    ...advertisements.map((advertisement) => {
      const parts = [
        advertisement.type,
        advertisement.local_name ? `“${advertisement.local_name}”` : null,
        advertisement.service_uuids.length ? `services ${advertisement.service_uuids.map(shortUUID).join(", ")}` : null,
        ...Object.entries(advertisement.manufacturer_data).map(([company, value]) => `manufacturer 0x${Number(company).toString(16).padStart(4, "0")}: ${value}`),
        ...Object.entries(advertisement.service_data).map(([uuid, value]) => `service data ${shortUUID(uuid)}: ${value}`),
        `${advertisement.data_length} bytes`,
        advertisement.registered ? "on air" : "not registered",
      ].filter(Boolean);
      return element("li", { dataset: { id: advertisement.id } }, [
        element("strong", { textContent: advertisement.id }),
        ` ${parts.join(" · ")} `,
        button("Stop", async () => {
          await attempt($("advertise-problem"), `Stopping ${advertisement.id}`, () => api("DELETE", `/v1/peripheral/advertisements/${advertisement.id}`));
          await loadAdvertisements();
        }, { "aria-label": `Stop advertising ${advertisement.id}` }),
      ]);
    }),
  );
  if (!advertisements.length) $("advertisements").append(element("li", { className: "note", textContent: "None." }));
}

// --- Centrals and their requests ---------------------------------------------

function describe(event) {
  const where = event.characteristic ? ` ${shortUUID(event.characteristic)}` : "";
  const value = event.value !== undefined ? ` ${event.value}` : "";
  switch (event.type) {
    case "read": return `${event.central || "a central"} read${where}`;
    case "written": return `${event.central || "a central"} wrote${value} to${where}`;
    case "request": return `${event.central || "a central"} asks to ${event.kind}${where}${value}`;
    case "request-expired": return `request ${event.id} expired (the central got Unlikely Error)`;
    case "subscribed": return `a central subscribed to${where}`;
    case "unsubscribed": return `the last central unsubscribed from${where}`;
    case "central-connected": return `${event.central} connected`;
    case "central-disconnected": return `${event.central} disconnected${event.reason ? `: ${event.reason}` : ""}`;
    case "reregistered": return `${event.id} registered again${event.error ? `, failed: ${event.error}` : ""}`;
    default: return event.type;
  }
}

function requestItem(event) {
  const problem = element("p", { hidden: true });
  const value = element("input", { value: event.kind === "read" ? "00" : "", size: 12, spellcheck: false, placeholder: "hex" });
  const error = element("select", {}, attErrors.map(([code, name]) => element("option", { value: String(code), textContent: `0x${code.toString(16).padStart(2, "0")} ${name}` })));
  const send = async (body) => {
    const done = await attempt(problem, `Answering ${event.id}`, () => api("POST", `/v1/peripheral/requests/${event.id}`, body));
    if (done === undefined) return;
    answered.add(event.id);
    sessionStorage.setItem(answeredKey, JSON.stringify([...answered].slice(-100)));
    item.remove();
  };
  const item = element("li", { className: "request", dataset: { id: event.id } }, [
    element("p", { textContent: describe(event) + ` (answer within ${Math.round((event.timeout_ms || 10000) / 1000)} s)` }),
    element("p", { className: "controls" }, [
      field(event.kind === "read" ? "Value to send (hex)" : "Accept the write", value),
      button("Answer", () => send({ value: value.value.trim() }), { "aria-label": `Answer ${event.id}` }),
      field("or refuse with", error),
      button("Refuse", () => send({ att_error: Number(error.value) }), { "aria-label": `Refuse ${event.id}` }),
    ]),
    problem,
  ]);
  return item;
}

function onEvent(type, event, id) {
  if (typeof event !== "object" || !event.type) return;
  if (id && sessionStorage.getItem(fromKey) === null) sessionStorage.setItem(fromKey, String(Number(id) - 1));
  const log = $("peripheral-log");
  log.prepend(element("li", {}, [element("time", { textContent: new Date(event.timestamp || Date.now()).toLocaleTimeString() }), ` ${describe(event)}`]));
  while (log.children.length > 100) log.lastElementChild.remove();
  if (event.central) {
    const state = type === "central-disconnected" ? "disconnected" : "connected";
    centrals.set(event.central, { state, last: describe(event) });
    renderCentrals();
  }
  // A replayed request whose deadline has passed was answered or expired.
  const waiting = !answered.has(event.id) && new Date(event.timestamp).getTime() + (event.timeout_ms || 0) > Date.now();
  if (type === "request" && waiting) $("requests").append(requestItem(event));
  if (type === "request-expired") $("requests").querySelector(`li[data-id="${CSS.escape(event.id)}"]`)?.remove();
  if (["subscribed", "unsubscribed", "written", "reregistered"].includes(type)) loadApplications();
}

function renderCentrals() {
  $("centrals").tBodies[0].replaceChildren(
    ...[...centrals].map(([address, central]) =>
      element("tr", { dataset: { address } }, [
        element("td", { className: "mono", textContent: address }),
        element("td", { textContent: central.state }),
        element("td", { textContent: central.last }),
      ]),
    ),
  );
  labelCells($("centrals"));
}

/// Follows what centrals do, once there is something to follow; after a
/// reload, from the first event this tab saw (the centrals and the log
/// are rebuilt from the stream's replay).
function follow() {
  if (stream) return;
  const from = sessionStorage.getItem(fromKey);
  stream = openStream("/v1/peripheral/events", onEvent, { reconnect: true, resume: true, lastEventId: from === null ? undefined : Number(from) });
}

export async function load() {
  await Promise.all([loadApplications(), loadAdvertisements()]);
}

export function setup() {
  const list = $("publish-characteristics");
  list.append(characteristicRow({ uuid: "2a37", flags: ["read", "notify"], value: "0048" }));
  list.append(characteristicRow({ uuid: "2a39", flags: ["write"], delegate: true }));
  $("publish-add").addEventListener("click", () => list.append(characteristicRow({ flags: ["read"] })));
  $("publish-json-details").addEventListener("toggle", () => {
    if ($("publish-json-details").open && !$("publish-json").value.trim()) {
      $("publish-json").value = JSON.stringify(formApplication(), null, 2);
    }
  });
  $("publish-form").addEventListener("submit", publish);
  $("advertise-kind").addEventListener("change", showKind);
  $("advertise-form").addEventListener("submit", advertise);
  showKind();
  report($("publish-problem"), null);
}

export function shown() {
  follow();
  return load();
}
