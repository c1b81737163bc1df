// Small DOM helpers shared by the views. Text from the radio (names,
// values, descriptions) only ever goes into textContent or attribute
// values, never into markup.

export const $ = (id) => document.getElementById(id);

export function element(tag, properties, children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(properties || {})) {
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("aria-") || name === "role" || name === "for" || name === "scope") node.setAttribute(name, value);
    else node[name] = value;
  }
  for (const child of children || []) if (child !== null && child !== undefined) node.append(child);
  return node;
}

export function button(label, onClick, properties) {
  const node = element("button", Object.assign({ type: "button", textContent: label }, properties));
  node.addEventListener("click", onClick);
  return node;
}

export function field(label, input, hint) {
  if (!input.id) input.id = `field-${++fieldCount}`;
  return element("label", { className: "field", for: input.id }, [element("span", { textContent: label }), input, hint]);
}
let fieldCount = 0;

/// Shows the outcome of an action where it was asked for: a problem as a
/// sentence (`error.sentence`), or a plain note.
export function report(node, error, action) {
  if (!error) {
    node.textContent = "";
    node.hidden = true;
    return;
  }
  node.hidden = false;
  node.className = "problem";
  node.setAttribute("role", "alert");
  node.textContent = typeof error.sentence === "function" ? error.sentence(action) : `${action} failed: ${error.message}.`;
}

export function note(node, text) {
  node.hidden = !text;
  node.className = "note";
  node.setAttribute("role", "status");
  node.textContent = text;
}

/// Runs `work`, showing its problem in `node` as a sentence; the result, or
/// undefined after a failure.
export async function attempt(node, action, work) {
  try {
    const result = await work();
    report(node, null);
    return result;
  } catch (error) {
    report(node, error, action);
    return undefined;
  }
}

const baseUUID = /^0000([0-9a-f]{4})-0000-1000-8000-00805f9b34fb$/i;
export const shortUUID = (uuid) => (baseUUID.exec(uuid || "") || [null, uuid || ""])[1].toLowerCase();

export function hexBytes(hex) {
  const clean = (hex || "").replace(/[^0-9a-f]/gi, "");
  const bytes = new Uint8Array(clean.length >> 1);
  for (let index = 0; index < bytes.length; index += 1) bytes[index] = parseInt(clean.slice(index * 2, index * 2 + 2), 16);
  return bytes;
}

export function relativeTime(date) {
  if (!date) return "";
  const seconds = Math.max(0, Math.round((Date.now() - date.getTime()) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  return date.toLocaleString();
}

const svgNS = "http://www.w3.org/2000/svg";

export function sparkline(values, label) {
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", "64");
  svg.setAttribute("height", "18");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  if (values.length > 1) {
    const low = Math.min(...values) - 1;
    const high = Math.max(...values) + 1;
    const points = values.map((value, index) => {
      const x = (index / (values.length - 1)) * 62 + 1;
      const y = 17 - ((value - low) / (high - low)) * 16;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    const line = document.createElementNS(svgNS, "polyline");
    line.setAttribute("points", points.join(" "));
    svg.append(line);
  }
  return svg;
}

/// A line plot of `points` scaled to their range on `canvas`, which also
/// carries what it shows as data attributes (points, last value).
export function drawPlot(canvas, points) {
  const context = canvas.getContext("2d");
  const { width, height } = canvas;
  context.clearRect(0, 0, width, height);
  canvas.dataset.points = String(points.length);
  canvas.dataset.lastValue = points.length ? String(points[points.length - 1]) : "";
  if (!points.length) return;
  const low = Math.min(...points);
  const high = Math.max(...points);
  const span = high - low || 1;
  const top = 14;
  const bottom = height - 14;
  context.font = "11px sans-serif";
  context.fillStyle = "#57606a";
  context.fillText(String(+high.toFixed(3)), 4, top - 3);
  context.fillText(String(+low.toFixed(3)), 4, height - 3);
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

/// Parses a table's header buttons into sort state: clicking a column sorts
/// by it, clicking again reverses.
export function sortable(table, state, onChange) {
  for (const header of table.querySelectorAll("th[data-sort]")) {
    const key = header.dataset.sort;
    const control = button(header.textContent, () => {
      state.descending = state.key === key ? !state.descending : key !== "name";
      state.key = key;
      onChange();
    });
    header.replaceChildren(control);
  }
  return function mark() {
    for (const header of table.querySelectorAll("th[data-sort]")) {
      const active = header.dataset.sort === state.key;
      header.setAttribute("aria-sort", active ? (state.descending ? "descending" : "ascending") : "none");
    }
  };
}

/// Gives each cell of `table`'s body its column's name (`data-label`),
/// which narrow screens show before the value when rows become cards.
export function labelCells(table) {
  const names = [...table.tHead.rows[0].cells].map((cell) => (cell.querySelector(".visually-hidden") ? "" : cell.textContent.trim()));
  for (const row of table.tBodies[0].rows) {
    [...row.cells].forEach((cell, index) => {
      if (cell.dataset.label === undefined && cell.colSpan === 1) cell.dataset.label = names[index] || "";
    });
  }
}
