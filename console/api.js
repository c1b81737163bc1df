// The gateway's HTTP API as the console uses it: JSON calls and
// Server-Sent-Event streams read with fetch, so that the API key travels in
// the Authorization header (EventSource can send no header, and the key is
// never put in a URL). The key is asked for once and kept in sessionStorage.

const keyStorage = "blegateway.apiKey";

export function apiKey() {
  return sessionStorage.getItem(keyStorage) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(keyStorage, key);
  else sessionStorage.removeItem(keyStorage);
}

function headers(extra) {
  const result = Object.assign({ Accept: "application/json" }, extra);
  const key = apiKey();
  if (key) result.Authorization = `Bearer ${key}`;
  return result;
}

/// A failed call: the RFC 9457 problem the gateway answered, and a
/// sentence for people built from it.
export class Problem extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.problem = problem;
    this.status = status;
  }

  // "Reading Battery Level failed: Read not permitted (403, org.bluez.Error.NotPermitted). Pair the device first."
  sentence(action) {
    const problem = this.problem;
    const detail = (problem.detail || problem.title || "no detail").replace(/\.$/, "");
    const facts = [String(this.status)];
    if (problem.dbus_error) facts.push(problem.dbus_error);
    if (typeof problem.att_error === "number" && !/ATT error/.test(detail)) facts.push(`ATT error 0x${problem.att_error.toString(16).padStart(2, "0")}`);
    const kind = String(problem.type || "").replace("urn:blegateway:problem:", "");
    const hint = hints[kind] || (this.status === 401 ? "Enter the gateway's API key above." : "");
    return `${action} failed: ${detail} (${facts.join(", ")}).${hint ? ` ${hint}` : ""}`;
  }
}

const hints = {
  "not-connected": "Connect the device first.",
  "not-paired": "Pair the device first, or answer the pairing dialog when it asks.",
  "pairing-rejected": "The pairing was refused or nobody answered in time.",
  "authentication-failed": "The passkey was wrong or the device refused.",
  "adapter-unavailable": "Power the adapter on (Operations).",
  "bluetoothd-unavailable": "bluetoothd is not reachable; the gateway retries by itself.",
  timeout: "The device did not answer in time; it may be out of range.",
};

/// A call that failed before any answer (the gateway is unreachable).
export class Unreachable extends Error {
  sentence(action) {
    return `${action} failed: the gateway did not answer (${this.message}).`;
  }
}

export async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new Unreachable(error.message);
  }
  const text = await response.text();
  let data = null;
  if (text && (response.headers.get("Content-Type") || "").includes("json")) data = JSON.parse(text);
  else if (text) data = text;
  if (!response.ok) throw new Problem(data && typeof data === "object" ? data : { detail: text }, response.status);
  return data;
}

export async function apiText(path) {
  const response = await fetch(path, { headers: headers({ Accept: "text/plain" }) });
  const text = await response.text();
  if (!response.ok) throw new Problem({ detail: text.slice(0, 200) }, response.status);
  return text;
}

/// Follows a text/event-stream: `onEvent(type, data, id)` for each event
/// (data parsed from JSON). Reconnects after a dropped connection, resuming
/// after the last id seen when `resume` is set. `close()` ends it for good.
export function openStream(path, onEvent, options = {}) {
  const controller = new AbortController();
  let lastId = options.lastEventId;
  let closed = false;
  let retries = 0;

  async function run() {
    while (!closed) {
      try {
        const extra = { Accept: "text/event-stream" };
        if (options.resume && lastId !== undefined && lastId !== null) extra["Last-Event-ID"] = String(lastId);
        const response = await fetch(path, { headers: headers(extra), signal: controller.signal });
        if (!response.ok) {
          const text = await response.text();
          let problem = { detail: text };
          try { problem = JSON.parse(text); } catch { /* not JSON: keep the text */ }
          if (options.onProblem) options.onProblem(new Problem(problem, response.status));
          return;
        }
        if (options.onOpen) options.onOpen();
        retries = 0;
        await read(response.body.getReader());
      } catch (error) {
        if (closed || error.name === "AbortError") return;
      }
      if (closed || !options.reconnect) break;
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** retries, 10000)));
    }
    if (!closed && options.onEnd) options.onEnd();
  }

  async function read(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    let event = { type: "message", data: [], id: undefined };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (event.data.length && !closed) deliver(event);
          event = { type: "message", data: [], id: undefined };
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event.type = text;
          else if (field === "data") event.data.push(text);
          else if (field === "id") event.id = text;
        }
      }
    }
  }

  function deliver(event) {
    if (event.id !== undefined && event.id !== "") lastId = Number(event.id);
    let data;
    try {
      data = JSON.parse(event.data.join("\n"));
    } catch {
      data = event.data.join("\n");
    }
    onEvent(event.type, data, event.id);
  }

  run();
  return {
    close() {
      closed = true;
      controller.abort();
    },
    get lastEventId() {
      return lastId;
    },
  };
}

export const device = (address) => `/v1/devices/${encodeURIComponent(address)}`;
