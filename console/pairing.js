// The pairing dialog: the gateway's agent asks (a `pairing-request` event,
// or GET /v1/pairing-requests after a reload) and the dialog answers with
// POST /v1/pairing-requests/{id}. Requests are shown one at a time, the
// first to expire first.

import { api } from "./api.js";
import { $, attempt, report } from "./ui.js";
import { known } from "./devices.js";

const pending = new Map();
let shown = null;

function who(address) {
  const device = known(address);
  const name = device && (device.name || device.alias);
  return name && name !== address ? `${name} (${address})` : address;
}

const texts = {
  passkey: (request) => `${who(request.address)} shows a six-digit passkey. Type it here to pair.`,
  confirmation: (request) => `Does ${who(request.address)} show the passkey ${request.passkey}? Pair only if it does.`,
  "display-passkey": (request) =>
    `Type ${request.passkey} on ${who(request.address)}.${typeof request.entered === "number" ? ` ${request.entered} digit(s) typed so far.` : ""}`,
  "pin-code": (request) => `${who(request.address)} needs a PIN code to pair. Type the PIN it expects.`,
  "display-pin-code": (request) => `Type the PIN ${request.pin} on ${who(request.address)}.`,
  authorization: (request) => `May ${who(request.address)} pair with this gateway?`,
  "service-authorization": (request) => `May ${who(request.address)} use the service ${request.service || ""}?`,
};

export function request(item) {
  if (item.expires && new Date(item.expires).getTime() < Date.now()) return;
  pending.set(item.id, item);
  if (!shown || shown.id === item.id) show(item);
}

export function settled(id) {
  pending.delete(id);
  if (shown && shown.id === id) next();
}

function next() {
  shown = null;
  const dialog = $("pairing");
  const following = [...pending.values()].sort((a, b) => String(a.expires).localeCompare(String(b.expires)))[0];
  if (following) show(following);
  else if (dialog.open) dialog.close();
}

function show(item) {
  shown = item;
  const dialog = $("pairing");
  const kind = item.kind;
  const input = $("pairing-input");
  const asks = kind === "passkey" || kind === "pin-code";
  const informs = kind === "display-passkey" || kind === "display-pin-code";
  $("pairing-heading").textContent = informs ? "Pairing: type this on the device" : "Pairing request";
  $("pairing-text").textContent = (texts[kind] || ((r) => `${who(r.address)} asks: ${kind}`))(item);
  $("pairing-input-label").hidden = !asks;
  $("pairing-input-name").textContent = kind === "pin-code" ? "PIN code" : "Passkey (6 digits)";
  input.required = asks;
  input.pattern = kind === "passkey" ? "[0-9]{1,6}" : ".{1,16}";
  input.inputMode = kind === "passkey" ? "numeric" : "text";
  $("pairing-accept").textContent = informs ? "Done" : asks ? "Pair" : "Yes, pair";
  $("pairing-reject").hidden = informs;
  dialog.dataset.kind = kind;
  dialog.dataset.request = item.id;
  report($("pairing-problem"), null);
  if (!dialog.open) {
    input.value = "";
    dialog.showModal();
  }
  (asks ? input : $("pairing-accept")).focus();
}

async function answer(accept) {
  const item = shown;
  if (!item) return;
  const kind = item.kind;
  if (kind === "display-passkey" || kind === "display-pin-code") {
    // Nothing to answer: the device types it.
    settled(item.id);
    return;
  }
  let body = { confirm: accept };
  if (accept && kind === "passkey") body = { passkey: Number($("pairing-input").value) };
  if (accept && kind === "pin-code") body = { pin: $("pairing-input").value };
  const done = await attempt($("pairing-problem"), "Answering the pairing request", () =>
    api("POST", `/v1/pairing-requests/${encodeURIComponent(item.id)}`, body),
  );
  if (done !== undefined) settled(item.id);
}

/// After a reload: the questions still waiting.
export async function load() {
  const requests = await api("GET", "/v1/pairing-requests").catch(() => []);
  for (const item of requests) request(item);
}

export function setup() {
  $("pairing-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!$("pairing-form").reportValidity()) return;
    answer(true);
  });
  $("pairing-reject").addEventListener("click", () => answer(false));
  $("pairing").addEventListener("cancel", (event) => {
    event.preventDefault();
    answer(false);
  });
}
