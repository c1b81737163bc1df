// The blegateway web console: plain JavaScript over the gateway's own API
// (same origin). Every call carries the API key from the key field
// (kept in localStorage); EventSource cannot send headers, so streams pass
// it as access_token.
"use strict";

(() => {
  const keyStorage = "blegateway.apiKey";
  const $ = (id) => document.getElementById(id);
  const state = {
    key: localStorage.getItem(keyStorage) || "",
    scan: null,
    devices: new Map(),
    device: null,
    characteristic: null,
    notifications: null,
    events: null,
    points: [],
  };

  // --- API --------------------------------------------------------------

  function headers(extra) {
    const result = Object.assign({ Accept: "application/json" }, extra || {});
    if (state.key) result.Authorization = `Bearer ${state.key}`;
    return result;
  }

  async function api(method, path, body) {
    const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(path, init);
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) {
      const detail = data && (data.detail || data.title) ? `${data.title}: ${data.detail}` : `HTTP ${response.status}`;
      throw new Error(detail);
    }
    return data;
  }

  function stream(path) {
    const separator = path.includes("?") ? "&" : "?";
    return new EventSource(state.key ? `${path}${separator}access_token=${encodeURIComponent(state.key)}` : path);
  }

  function say(text, kind) {
    const message = $("message");
    message.textContent = text;
    message.className = kind || "";
    message.hidden = !text;
  }

  async function attempt(action) {
    try {
      say("");
      return await action();
    } catch (error) {
      say(error.message);
      return undefined;
    }
  }

  // --- Helpers ----------------------------------------------------------

  const baseUUID = /^0000([0-9a-f]{4})-0000-1000-8000-00805f9b34fb$/i;
  const shortUUID = (uuid) => (baseUUID.exec(uuid) || [null, uuid])[1].toLowerCase();

  function element(tag, properties, children) {
    const node = document.createElement(tag);
    Object.assign(node, properties || {});
    for (const child of children || []) node.append(child);
    return node;
  }

  function button(label, onClick, properties) {
    const node = element("button", Object.assign({ type: "button", textContent: label }, properties || {}));
    node.addEventListener("click", onClick);
    return node;
  }

  function hexBytes(hex) {
    const bytes = [];
    for (let index = 0; index + 1 < hex.length; index += 2) bytes.push(parseInt(hex.slice(index, index + 2), 16));
    return bytes;
  }

  // Standard characteristics worth a number; anything else is shown as bytes.
  const decoders = {
    "2a37": (bytes) => (bytes[0] & 1 ? bytes[1] | (bytes[2] << 8) : bytes[1]), // Heart Rate Measurement, bpm
    "2a19": (bytes) => bytes[0], // Battery Level, percent
  };
  const units = { "2a37": "bpm", "2a19": "%" };

  // --- Header: gateway and key ------------------------------------------

  async function loadGateway() {
    const info = await attempt(() => api("GET", "/v1"));
    if (!info) {
      $("gateway-status").textContent = "gateway unreachable or key refused";
      return false;
    }
    const bluez = info.bluez.available ? "BlueZ available" : "BlueZ unavailable";
    $("gateway-status").textContent = `version ${info.version} · ${bluez}${info.bluez.simulated ? " · simulated" : ""}`;
    renderAdapters(info.adapters);
    return true;
  }

  $("api-key").value = state.key;
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.key = $("api-key").value.trim();
    if (state.key) localStorage.setItem(keyStorage, state.key);
    else localStorage.removeItem(keyStorage);
    start();
  });

  // --- Adapters ---------------------------------------------------------

  function renderAdapters(adapters) {
    const body = $("adapters").tBodies[0];
    body.replaceChildren(
      ...adapters.map((adapter) =>
        element("tr", {}, [
          element("td", { textContent: adapter.name }),
          element("td", { className: "mono", textContent: adapter.address || "" }),
          element("td", { textContent: adapter.state }),
          element("td", {}, [
            button(adapter.powered ? "Power off" : "Power on", () => setPowered(adapter.name, !adapter.powered), {
              ariaLabel: `${adapter.powered ? "Power off" : "Power on"} ${adapter.name}`,
            }),
          ]),
        ]),
      ),
    );
  }

  async function setPowered(adapter, powered) {
    await attempt(() => api("PATCH", `/v1/adapters/${encodeURIComponent(adapter)}`, { powered }));
    const adapters = await attempt(() => api("GET", "/v1/adapters"));
    if (adapters) renderAdapters(adapters);
  }

  // --- Scan -------------------------------------------------------------

  function toggleScan() {
    if (state.scan) return stopScan();
    const service = $("scan-service").value.trim();
    const source = stream(`/v1/scan${service ? `?service=${encodeURIComponent(service)}` : ""}`);
    state.scan = source;
    const toggle = $("scan-toggle");
    toggle.textContent = "Stop scan";
    toggle.setAttribute("aria-pressed", "true");
    $("scan-state").textContent = "scanning…";
    for (const type of ["discovered", "updated"]) {
      source.addEventListener(type, (event) => seen(JSON.parse(event.data).device));
    }
    source.addEventListener("lost", (event) => lost(JSON.parse(event.data).device));
    source.addEventListener("scan-stopped", stopScan);
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) stopScan();
    };
    return undefined;
  }

  function stopScan() {
    if (state.scan) state.scan.close();
    state.scan = null;
    const toggle = $("scan-toggle");
    toggle.textContent = "Start scan";
    toggle.setAttribute("aria-pressed", "false");
    $("scan-state").textContent = "";
  }

  function seen(device) {
    let entry = state.devices.get(device.address);
    if (!entry) {
      entry = { rssi: [], row: null };
      state.devices.set(device.address, entry);
    }
    entry.device = device;
    entry.lastSeen = new Date();
    if (typeof device.rssi === "number") {
      entry.rssi.push(device.rssi);
      if (entry.rssi.length > 30) entry.rssi.shift();
    }
    renderScanRow(entry);
  }

  function lost(device) {
    const entry = state.devices.get(device.address);
    if (entry && entry.row) entry.row.remove();
    state.devices.delete(device.address);
  }

  function manufacturer(device, full) {
    const entries = Object.values(device.manufacturer_data || {});
    return entries
      .map((entry) => {
        const name = entry.company || `company 0x${entry.company_id.toString(16).padStart(4, "0")}`;
        if (!entry.value) return name;
        const shown = full || entry.value.length <= 16 ? entry.value : `${entry.value.slice(0, 16)}…`;
        return `${name}: ${shown}`;
      })
      .join("; ");
  }

  function sparkline(values) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("width", "60");
    svg.setAttribute("height", "16");
    svg.setAttribute("aria-hidden", "true");
    if (values.length > 1) {
      const low = Math.min(...values) - 1;
      const high = Math.max(...values) + 1;
      const points = values.map((value, index) => {
        const x = (index / (values.length - 1)) * 58 + 1;
        const y = 15 - ((value - low) / (high - low)) * 14;
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      });
      const line = document.createElementNS(ns, "polyline");
      line.setAttribute("points", points.join(" "));
      svg.append(line);
    }
    return svg;
  }

  function renderScanRow(entry) {
    const device = entry.device;
    const rssi = typeof device.rssi === "number" ? `${device.rssi} dBm` : "";
    const cells = [
      element("td", { textContent: device.name || device.alias || "" }),
      element("td", { className: "mono", textContent: device.address }),
      element("td", { className: "rssi" }, [rssi, sparkline(entry.rssi)]),
      element("td", { className: "mono manufacturer", textContent: manufacturer(device), title: manufacturer(device, true) }),
      element("td", { textContent: entry.lastSeen.toLocaleTimeString() }),
      element("td", {}, [
        button("Open", () => selectDevice(device.address), { ariaLabel: `Open ${device.name || device.address}` }),
      ]),
    ];
    if (!entry.row) {
      entry.row = element("tr", {});
      entry.row.dataset.address = device.address;
      $("scan").tBodies[0].append(entry.row);
    }
    entry.row.replaceChildren(...cells);
    entry.row.classList.toggle("selected", state.device === device.address);
  }

  // --- Device and GATT --------------------------------------------------

  async function selectDevice(address) {
    state.device = address;
    for (const [other, entry] of state.devices) entry.row && entry.row.classList.toggle("selected", other === address);
    $("device").hidden = false;
    $("device-heading").textContent = `Device ${address}`;
    await refreshDevice();
  }

  async function refreshDevice() {
    const address = state.device;
    const device = await attempt(() => api("GET", `/v1/devices/${address}`));
    if (!device) return;
    $("device-state").textContent = device.connected ? "connected" : "not connected";
    $("device-connect").disabled = device.connected;
    $("device-disconnect").disabled = !device.connected;
    if (device.connected) await loadServices();
    else $("gatt").replaceChildren();
  }

  async function connect() {
    $("device-state").textContent = "connecting…";
    $("device-connect").disabled = true;
    await attempt(() => api("POST", `/v1/devices/${state.device}/connect`));
    await refreshDevice();
  }

  async function disconnect() {
    stopNotifications();
    await attempt(() => api("POST", `/v1/devices/${state.device}/disconnect`));
    await refreshDevice();
  }

  async function loadServices() {
    const services = await attempt(() => api("GET", `/v1/devices/${state.device}/services`));
    if (!services) return;
    $("gatt").replaceChildren(
      ...services.map((service) =>
        element("details", { open: true }, [
          element("summary", {}, [
            `${service.name || "Unknown service"} `,
            element("span", { className: "uuid mono", textContent: shortUUID(service.uuid) }),
          ]),
          element(
            "ul",
            {},
            service.characteristics.map((characteristic) => characteristicItem(service, characteristic)),
          ),
        ]),
      ),
    );
  }

  function characteristicItem(service, characteristic) {
    const short = shortUUID(characteristic.uuid);
    const label = characteristic.name || short;
    const item = element("li", {}, [
      element("span", { textContent: characteristic.name || "Unknown characteristic" }),
      element("span", { className: "uuid mono", textContent: short }),
      element("span", { className: "flags", textContent: characteristic.flags.join(", ") }),
      button("Select", () => selectCharacteristic(service, characteristic), { ariaLabel: `Select ${label}` }),
    ]);
    item.dataset.uuid = short;
    return item;
  }

  // --- Read, write, notifications ---------------------------------------

  function characteristicPath(suffix) {
    const target = state.characteristic;
    return `/v1/devices/${state.device}/characteristics/${target.uuid}${suffix}?service=${target.service}`;
  }

  function selectCharacteristic(service, characteristic) {
    stopNotifications();
    const short = shortUUID(characteristic.uuid);
    state.characteristic = { uuid: short, service: shortUUID(service.uuid), flags: characteristic.flags };
    $("value").hidden = false;
    $("value-heading").textContent = characteristic.name || `Characteristic ${short}`;
    $("value-target").textContent = `${short} in ${service.name || shortUUID(service.uuid)} · ${characteristic.flags.join(", ")}`;
    const can = (flag) => characteristic.flags.includes(flag);
    $("value-read").disabled = !can("read");
    $("value-write").disabled = !(can("write") || can("write-without-response"));
    $("value-notify").disabled = !(can("notify") || can("indicate"));
    $("value-output").textContent = "";
    state.points = [];
    drawPlot();
  }

  async function readValue() {
    const encoding = $("value-encoding").value;
    const result = await attempt(() => api("GET", `${characteristicPath("/value")}&encoding=${encoding}`));
    if (result) $("value-output").textContent = `read: ${result.value} (${result.encoding})`;
  }

  async function writeValue(event) {
    event.preventDefault();
    const body = { value: $("value-input").value, encoding: $("value-encoding").value };
    if (!state.characteristic.flags.includes("write")) body.type = "command";
    const result = await attempt(() => api("PUT", characteristicPath("/value"), body));
    if (result !== undefined) $("value-output").textContent = `written: ${body.value} (${body.encoding})`;
  }

  function toggleNotifications() {
    if (state.notifications) return stopNotifications();
    const target = state.characteristic;
    const decode = decoders[target.uuid];
    const source = stream(characteristicPath("/notifications"));
    state.notifications = source;
    state.points = [];
    drawPlot();
    const toggle = $("value-notify");
    toggle.textContent = "Stop notifications";
    toggle.setAttribute("aria-pressed", "true");
    source.addEventListener("notification", (event) => {
      const { value } = JSON.parse(event.data);
      const bytes = hexBytes(value);
      const number = decode ? decode(bytes) : null;
      if (number !== null && !Number.isNaN(number)) {
        state.points.push(number);
        if (state.points.length > 120) state.points.shift();
        drawPlot(`${number} ${units[target.uuid] || ""}`.trim());
      } else {
        $("plot-caption").textContent = `last value: ${value}`;
      }
      $("value-output").textContent = `notification: ${value}`;
    });
    source.addEventListener("subscription-ended", (event) => {
      const { reason } = JSON.parse(event.data);
      say(`notifications ended: ${reason}`, "info");
      stopNotifications();
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) stopNotifications();
    };
    return undefined;
  }

  function stopNotifications() {
    if (state.notifications) state.notifications.close();
    state.notifications = null;
    const toggle = $("value-notify");
    toggle.textContent = "Plot notifications";
    toggle.setAttribute("aria-pressed", "false");
  }

  // A line plot of the last values, scaled to their range. The canvas
  // exposes what it shows as data attributes (points, last value).
  function drawPlot(caption) {
    const canvas = $("plot");
    const context = canvas.getContext("2d");
    const { width, height } = canvas;
    const points = state.points;
    context.clearRect(0, 0, width, height);
    canvas.dataset.points = String(points.length);
    canvas.dataset.lastValue = points.length ? String(points[points.length - 1]) : "";
    $("plot-caption").textContent = caption ? `last value: ${caption}` : "No notifications yet.";
    if (!points.length) return;
    const low = Math.min(...points);
    const high = Math.max(...points);
    const span = high - low || 1;
    const top = 14;
    const bottom = height - 14;
    context.font = "11px sans-serif";
    context.fillStyle = "#57606a";
    context.fillText(String(high), 4, top - 3);
    context.fillText(String(low), 4, height - 3);
    context.strokeStyle = "#d0d7de";
    context.beginPath();
    context.moveTo(0, top);
    context.lineTo(width, top);
    context.moveTo(0, bottom);
    context.lineTo(width, bottom);
    context.stroke();
    context.strokeStyle = "#0a5fc2";
    context.lineWidth = 2;
    context.beginPath();
    points.forEach((value, index) => {
      const x = points.length === 1 ? width / 2 : (index / (points.length - 1)) * (width - 40) + 30;
      const y = bottom - ((value - low) / span) * (bottom - top);
      if (index === 0) context.moveTo(x, y);
      else context.lineTo(x, y);
    });
    context.stroke();
  }

  // --- Event log --------------------------------------------------------

  function followEvents() {
    if (state.events) state.events.close();
    const source = stream("/v1/events");
    state.events = source;
    const log = $("events");
    const types = [
      "adapter-state", "adapter-updated", "device-discovered", "device-lost", "device-connected",
      "services-resolved", "device-disconnected", "bluez-state", "gateway-stopping",
    ];
    for (const type of types) {
      source.addEventListener(type, (event) => {
        const data = JSON.parse(event.data);
        const subject = data.device ? data.device.address || data.device : data.adapter ? data.adapter.name || data.adapter : "";
        const item = element("li", {}, [
          element("span", { className: "type", textContent: type }),
          ` ${subject} `,
          element("time", { textContent: new Date().toLocaleTimeString() }),
        ]);
        log.prepend(item);
        while (log.children.length > 200) log.lastElementChild.remove();
        if (state.device && subject === state.device && /connected|resolved/.test(type)) refreshDevice();
      });
    }
  }

  // --- Start --------------------------------------------------------------

  $("scan-toggle").addEventListener("click", toggleScan);
  $("device-connect").addEventListener("click", connect);
  $("device-disconnect").addEventListener("click", disconnect);
  $("value-read").addEventListener("click", readValue);
  $("value-form").addEventListener("submit", writeValue);
  $("value-notify").addEventListener("click", toggleNotifications);

  async function start() {
    stopScan();
    if (await loadGateway()) followEvents();
  }

  start();
})();
