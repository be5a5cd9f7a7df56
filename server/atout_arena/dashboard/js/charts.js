// Small SVG charts, drawn from plain data with no library.
//
//   lineChart({ label, series: [{ name, points: [[x, y], ...] }], xLabel, yLabel })
//
// returns an <svg role="img"> whose accessible name is `label` (aria-label and <title>): a
// screen reader hears what the chart is about, the numbers are in the page's tables.

const SVG = "http://www.w3.org/2000/svg";
// Eight colours with at least 3:1 contrast on white, told apart by hue and by the legend.
const COLOURS = ["#2455d6", "#b42318", "#067647", "#7a2e98", "#b54708", "#0e7490", "#475467", "#c11574"];

function node(tag, attrs = {}, text = null) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (text !== null) n.textContent = text;
  return n;
}

function ticks(low, high, count) {
  const step = (high - low) / count;
  return Array.from({ length: count + 1 }, (_, i) => low + i * step);
}

export function lineChart({ label, series, xLabel = "", yLabel = "", width = 640, height = 260 }) {
  const svg = node("svg", { role: "img", "aria-label": label, viewBox: `0 0 ${width} ${height}`, class: "chart" });
  svg.append(node("title", {}, label));
  const drawn = series.filter((s) => s.points.length);
  const xs = drawn.flatMap((s) => s.points.map((p) => p[0]));
  const ys = drawn.flatMap((s) => s.points.map((p) => p[1]));
  const pad = { left: 48, right: 130, top: 12, bottom: 34 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  if (!xs.length) {
    svg.append(node("text", { x: width / 2, y: height / 2, "text-anchor": "middle", fill: "#475467" }, "No rated set yet."));
    return svg;
  }
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys) === Math.min(...ys) ? Math.min(...ys) + 1 : Math.max(...ys)];
  const sx = (x) => pad.left + ((x - x0) / (x1 - x0)) * plotW;
  const sy = (y) => pad.top + plotH - ((y - y0) / (y1 - y0)) * plotH;
  for (const y of ticks(y0, y1, 4)) {
    svg.append(node("line", { x1: pad.left, x2: pad.left + plotW, y1: sy(y), y2: sy(y), stroke: "#e4e7ec" }));
    svg.append(node("text", { x: pad.left - 6, y: sy(y) + 4, "text-anchor": "end", "font-size": 11, fill: "#475467" }, y.toFixed(1)));
  }
  svg.append(node("text", { x: pad.left + plotW / 2, y: height - 6, "text-anchor": "middle", "font-size": 11, fill: "#475467" }, xLabel));
  svg.append(node("text", { x: 12, y: pad.top + plotH / 2, "font-size": 11, fill: "#475467",
    transform: `rotate(-90 12 ${pad.top + plotH / 2})`, "text-anchor": "middle" }, yLabel));
  drawn.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const path = s.points.map((p, j) => `${j ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    svg.append(node("path", { d: path, fill: "none", stroke: colour, "stroke-width": 2, "data-series": s.name }));
    const ly = pad.top + 14 + i * 16;
    svg.append(node("line", { x1: width - pad.right + 10, x2: width - pad.right + 26, y1: ly - 4, y2: ly - 4, stroke: colour, "stroke-width": 3 }));
    svg.append(node("text", { x: width - pad.right + 30, y: ly, "font-size": 12, fill: "#1d2433" }, s.name));
  });
  return svg;
}
