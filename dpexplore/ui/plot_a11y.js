
// -- accessibility of one plot (appended to plotwidget.js; see dpexplore/ui/a11y.py) -----------
// plotly.js gives its SVG no accessible name. Each plot's widget element becomes a figure named by
// the plot's title, described by a short text generated from the traces the kernel sent (what is
// plotted against what, the axis ranges, each curve's ends, and the values at the marked points:
// "At k = 100: tight 4.69, basic 10"), updated when the traces change; a "Data table" button shows
// the plotted values as an HTML table. The text is computed in an idle moment after a change,
// never inside a slider step's redraw.

const A11Y_MAX_CURVES = 8;      // curves described one by one (then "and N more")
const A11Y_MAX_ROWS = 400;      // rows of a data table (the CSV has all)
const A11Y_MAX_AT = 2;          // "At x = …: each curve's value" sentences (the first marked points)

function a11yPlain(s) {
  return String(s === undefined || s === null ? "" : s).replace(/<br\s*\/?>/gi, " ")
    .replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim();
}

// a number as a student reads it off a plot: 3 significant digits, no trailing zeros
function a11yFmt(v) {
  if (v === null || v === undefined || !Number.isFinite(Number(v))) return String(v);
  v = Number(v);
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-4 && a < 1e7) return String(Number(v.toPrecision(3)));
  return v.toExponential(2).replace(/\.?0+e/, "e").replace("e+", "e");
}

function a11yTitle(t) {
  return a11yPlain(t && typeof t === "object" ? t.text : t);
}

function a11yAxis(layout, key) {
  const ax = layout[key] || {};
  return { name: a11yTitle(ax.title), log: ax.type === "log" };
}

// an axis title without its trailing explanation: "k" for "k (number of composed steps)", "σ" for
// "σ [noise]"; a formula's own parentheses stay ("E|M − median| / (n/2)")
function a11yShortAxis(name) {
  return name.replace(/\s*(\[[^\]]*\]|\([^()]* [^()]*\))$/, "") || name;
}

const a11yShown = (t) => t && t.visible !== false && t.visible !== "legendonly";

function a11yPoints(t) {
  const xs = Array.isArray(t.x) ? t.x : [], ys = Array.isArray(t.y) ? t.y : [];
  const out = [];
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
    const x = xs[i], y = ys[i];
    if (y === null || y === undefined || !Number.isFinite(Number(y))) continue;
    out.push([x, Number(y)]);
  }
  return out;
}

// whether the curve `pts` ends where it starts (an ellipse, a closed region's outline): at least
// 5 numeric points, the last within a millionth of the curve's extent of the first
function a11yClosed(pts) {
  if (pts.length < 5 || !pts.every((p) => typeof p[0] === "number")) return false;
  const [x0, y0] = pts[0], [x1, y1] = pts[pts.length - 1];
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  const w = Math.max(...xs) - Math.min(...xs), h = Math.max(...ys) - Math.min(...ys);
  return w > 0 && h > 0 && Math.abs(x1 - x0) <= 1e-6 * w && Math.abs(y1 - y0) <= 1e-6 * h;
}

// y of the curve `pts` (x ascending or descending) at x = at, linearly between points; null outside
function a11yAt(pts, at) {
  for (let i = 0; i < pts.length; i++) {
    const [x, y] = pts[i];
    if (x === at) return y;
    if (i > 0) {
      const [x0, y0] = pts[i - 1];
      if (typeof x === "number" && typeof x0 === "number" && (x0 - at) * (x - at) < 0) {
        return y0 + (y - y0) * (at - x0) / (x - x0);
      }
    }
  }
  return null;
}

// The panels of a figure: its traces grouped by x axis ("x", "x2", … of plotly's `grid`), each
// with its axes' names and its title (the annotation named PANEL_TITLE over it, plotwidget.js).
// A figure of one panel has one group, titled "".
function a11yPanels(data, layout) {
  const groups = new Map();
  for (const t of data || []) {
    const xa = t.xaxis || "x";
    if (!groups.has(xa)) groups.set(xa, { xa, ya: t.yaxis || "y", traces: [] });
    groups.get(xa).traces.push(t);
  }
  const notes = Array.isArray(layout.annotations) ? layout.annotations : [];
  return [...groups.values()].map((g) => {
    const a = notes.find((n) => panelAxis(n) === g.xa);
    return Object.assign(g, { title: a ? a11yPlain(a.text) : "",
      X: a11yAxis(layout, g.xa.replace("x", "xaxis")), Y: a11yAxis(layout, g.ya.replace("y", "yaxis")) });
  });
}

// a figure's name: its title, or (a figure of titled panels draws none) `meta.name`
function a11yFigureName(layout, fallbackName) {
  return a11yTitle(layout.title) || a11yPlain(layout.meta && layout.meta.name) || fallbackName;
}

function a11yDescribe(data, layout, fallbackName) {
  const name = a11yFigureName(layout, fallbackName);
  const panels = a11yPanels(data, layout);
  if (panels.length <= 1) {
    const X = a11yAxis(layout, "xaxis"), Y = a11yAxis(layout, "yaxis");
    return { name, text: a11yDescribeAxes(data, X, Y) || "No data." };
  }
  const text = panels.map((p, i) => `Panel ${i + 1} of ${panels.length}${p.title ? ", " + p.title : ""}: ` +
    (a11yDescribeAxes(p.traces, p.X, p.Y) || "no data.")).join(" ");
  return { name, text };
}

// what one pair of axes shows, in sentences (see the top of this file)
function a11yDescribeAxes(data, X, Y) {
  const xn = X.name || "x", yn = Y.name || "y";
  const traces = (data || []).filter(a11yShown);
  const parts = [];
  const grids = traces.filter((t) => t.type === "heatmap" || t.type === "contour");
  if (grids.length) {
    for (const g of grids) {
      const z = (g.z || []).flat().filter((v) => v !== null && Number.isFinite(Number(v))).map(Number);
      if (z.length) {
        parts.push(`A ${g.type === "contour" ? "contour" : "colour"} map${g.name ? " of " + a11yPlain(g.name) : ""} over ${xn} and ${yn}: values from ${a11yFmt(Math.min(...z))} to ${a11yFmt(Math.max(...z))}.`);
      }
    }
  }
  const lines = [], marks = [], clouds = [];
  for (const t of traces) {
    if (t.type === "heatmap" || t.type === "contour") continue;
    const pts = a11yPoints(t);
    if (!pts.length) continue;
    const mode = t.mode || (t.type === "bar" ? "bars" : "lines");
    const label = a11yPlain(t.name) || (t.type === "bar" ? "bars" : "curve");
    const dots = t.type !== "bar" && !mode.includes("lines") && mode.includes("markers");
    if (dots && pts.length <= 12) marks.push({ label, pts });
    else if (dots) clouds.push({ label, pts });
    else lines.push({ label, pts, bar: t.type === "bar", closed: a11yClosed(pts) });
  }
  // in sentences about points the axes go by their short names: "k", not "k (number of steps)"
  const xs = a11yShortAxis(xn), ysn = a11yShortAxis(yn);
  const all = lines.concat(marks, clouds).flatMap((c) => c.pts);
  const xsNum = all.map((p) => p[0]).filter((x) => typeof x === "number" && Number.isFinite(x));
  const yv = all.map((p) => p[1]);
  if (all.length) {
    const xr = xsNum.length ? `from ${a11yFmt(Math.min(...xsNum))} to ${a11yFmt(Math.max(...xsNum))}` : `${new Set(all.map((p) => String(p[0]))).size} categories`;
    parts.push(`${yn} against ${xn}. ${xs} ${xr}${X.log ? " (log scale)" : ""}; ` +
               `${ysn} from ${a11yFmt(Math.min(...yv))} to ${a11yFmt(Math.max(...yv))}${Y.log ? " (log scale)" : ""}.`);
  }
  if (lines.length) {
    const said = lines.slice(0, A11Y_MAX_CURVES).map((c) => {
      if (c.bar || c.pts.length <= 4) return `${c.label}: ${c.pts.map((p) => `${a11yFmt(p[0])} → ${a11yFmt(p[1])}`).join(", ")}`;
      if (c.closed) {
        // an ellipse or another closed curve: not a function of x (two y values at most x), so
        // its extent, not "from … to …" and values at a marker's x
        const cx = c.pts.map((p) => p[0]), cy = c.pts.map((p) => p[1]);
        return `${c.label}, a closed curve: ${xs} from ${a11yFmt(Math.min(...cx))} to ${a11yFmt(Math.max(...cx))}, ` +
               `${ysn} from ${a11yFmt(Math.min(...cy))} to ${a11yFmt(Math.max(...cy))}`;
      }
      const a = c.pts[0], b = c.pts[c.pts.length - 1];
      let s = `${c.label} from ${a11yFmt(a[1])} at ${xs} = ${a11yFmt(a[0])} to ${a11yFmt(b[1])} at ${a11yFmt(b[0])}`;
      let hi = 0;
      c.pts.forEach((p, i) => { if (p[1] > c.pts[hi][1]) hi = i; });
      if (hi > 0 && hi < c.pts.length - 1) s += `, highest ${a11yFmt(c.pts[hi][1])} at ${a11yFmt(c.pts[hi][0])}`;
      return s;
    });
    const more = lines.length - said.length;
    parts.push(`${lines.length === 1 ? "One curve" : lines.length + " curves"}: ${said.join("; ")}${more > 0 ? `; and ${more} more` : ""}.`);
  }
  for (const c of clouds) {
    const v = c.pts.map((p) => p[1]);
    parts.push(`${c.label}: ${c.pts.length} points, ${ysn} from ${a11yFmt(Math.min(...v))} to ${a11yFmt(Math.max(...v))}.`);
  }
  // the values a student reads off at a marked point: every curve at the marker's x
  const said = new Set();
  const say = (text) => { if (!said.has(text)) { said.add(text); parts.push(text); } };
  const curves = lines.filter((c) => !c.bar && !c.closed);
  for (const m of marks) {
    const xsHere = [...new Set(m.pts.map((p) => p[0]))];
    for (const x of xsHere) {
      const at = curves.map((c) => [c.label, a11yAt(c.pts, x)]).filter((p) => p[1] !== null);
      if (at.length && said.size < A11Y_MAX_AT) say(`At ${xs} = ${a11yFmt(x)}: ${at.map(([l, v]) => `${l} ${a11yFmt(v)}`).join(", ")}.`);
    }
    say(`Marked (${m.label}): ${xsHere.map((x) => `at ${xs} = ${a11yFmt(x)}, ${ysn} = ` +
        m.pts.filter((p) => p[0] === x).map((p) => a11yFmt(p[1])).join(", ")).join("; ")}.`);
  }
  return parts.join(" ");
}

// The plotted values as HTML tables: traces sharing their x values side by side, others alone.
function a11yTables(data, layout, name) {
  const groups = [];   // [X, Y, panel title, traces sharing their x values]
  for (const p of a11yPanels(data, layout)) {
    const byX = new Map();
    for (const t of p.traces.filter(a11yShown)) {
      if (!Array.isArray(t.x) || !Array.isArray(t.y) || t.type === "heatmap" || t.type === "contour") continue;
      const key = JSON.stringify(t.x);
      if (!byX.has(key)) { byX.set(key, []); groups.push([p.X, p.Y, p.title, byX.get(key)]); }
      byX.get(key).push(t);
    }
  }
  const frag = document.createDocumentFragment();
  let n = 0;
  for (const [X, Y, panel, ts] of groups) {
    const table = document.createElement("table");
    table.className = "dpexplore-data-table";
    const cap = document.createElement("caption");
    cap.textContent = `${name}${panel ? ", " + panel : ""}${groups.length > 1 ? ` (${++n} of ${groups.length})` : ""}: ${Y.name || "y"} by ${X.name || "x"}`;
    table.appendChild(cap);
    const head = table.createTHead().insertRow();
    for (const h of [X.name || "x"].concat(ts.map((t) => a11yPlain(t.name) || Y.name || "y"))) {
      const th = document.createElement("th");
      th.scope = "col"; th.textContent = h; head.appendChild(th);
    }
    const body = table.createTBody();
    const rows = ts[0].x.length;
    for (let i = 0; i < Math.min(rows, A11Y_MAX_ROWS); i++) {
      const tr = body.insertRow();
      const th = document.createElement("th");
      th.scope = "row"; th.textContent = a11yFmt(ts[0].x[i]); tr.appendChild(th);
      for (const t of ts) tr.insertCell().textContent = t.y[i] === null || t.y[i] === undefined ? "–" : a11yFmt(t.y[i]);
    }
    if (rows > A11Y_MAX_ROWS) {
      const tr = body.insertRow(), td = tr.insertCell();
      td.colSpan = ts.length + 1;
      td.textContent = `… the first ${A11Y_MAX_ROWS} of ${rows} rows (the CSV has all of them).`;
    }
    frag.appendChild(table);
  }
  return frag;
}

// one of a plot's small buttons (top left, shown on hover and focus), its state attribute "false"
function a11yButton(text, cls, state) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "jupyter-button dpexplore-table-button " + cls;
  b.textContent = text;
  b.setAttribute(state, "false");
  return b;
}

let a11yPlots = 0;
function a11yPlotId(node, prefix) {
  if (!node.id) node.id = prefix + "-" + (++a11yPlots) + "-" + Math.random().toString(36).slice(2, 7);
  return node.id;
}
// Give the widget element `el` (holding the plot div) its name, description and data table;
// returns update(), to be called whenever the traces or the layout may have changed.
function plotA11y(model, el) {
  const index = ++a11yPlots;  // "Plot n" for a plot without a title
  el.setAttribute("role", "figure");
  el.classList.add("dpexplore-figure");
  const desc = document.createElement("p");
  desc.className = "dpexplore-sr-only dpexplore-plot-desc";
  el.setAttribute("aria-describedby", a11yPlotId(desc, "dpexplore-desc"));
  const btn = a11yButton("Data table", "", "aria-expanded");
  const panel = document.createElement("div");
  panel.className = "dpexplore-data";
  panel.hidden = true;
  panel.tabIndex = 0;   // it scrolls: the keyboard must reach it
  panel.setAttribute("role", "region");
  btn.setAttribute("aria-controls", a11yPlotId(panel, "dpexplore-data"));
  const tools = document.createElement("div");
  tools.className = "dpexplore-plot-tools";
  tools.appendChild(btn);
  tools.appendChild(a11yAudioTrace(model));
  el.insertBefore(tools, el.firstChild);   // before the plot: first in the Tab order, not after its toolbar
  el.appendChild(desc);
  el.appendChild(panel);
  let current = { name: "", text: "" };
  const fill = () => {
    panel.textContent = "";
    panel.setAttribute("aria-label", "Data table: " + current.name);
    const p = document.createElement("p");
    p.className = "dpexplore-data-desc";
    p.textContent = current.text;
    panel.appendChild(p);
    panel.appendChild(a11yTables(model.get("data"), model.get("plot_layout") || {}, current.name));
  };
  btn.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    btn.setAttribute("aria-expanded", panel.hidden ? "false" : "true");
    btn.textContent = panel.hidden ? "Data table" : "Hide data table";
    tools.classList.toggle("dpexplore-open", !panel.hidden);
    if (!panel.hidden) fill();
  });
  let queued = false;
  const run = () => {
    queued = false;
    current = a11yDescribe(model.get("data"), model.get("plot_layout") || {}, "Plot " + index);
    if (el.getAttribute("aria-label") !== current.name) el.setAttribute("aria-label", current.name);
    if (desc.textContent !== current.text) desc.textContent = current.text;
    // plotly's SVG (tick labels, legend text) read as unlabelled images: the description says it
    el.querySelectorAll("svg.main-svg").forEach((g) => g.setAttribute("aria-hidden", "true"));
    a11yModebar(el);
    el.dataset.describedRevision = String(Number(el.dataset.describedRevision || 0) + 1);
    if (!panel.hidden) fill();
  };
  // off the critical path of a redraw: when the browser is idle (at most 300 ms later)
  const later = window.requestIdleCallback ? (f) => window.requestIdleCallback(f, { timeout: 300 }) : (f) => setTimeout(f, 50);
  const update = () => { if (!queued) { queued = true; later(run); } };
  update();
  return update;
}

// plotly's toolbar (download, zoom, pan … up to 10 buttons) was up to 10 Tab stops a plot on the
// way to the next control (24 in a tab of two plots): it is one toolbar (WAI-ARIA toolbar pattern)
// now, a single Tab stop (the button last used), the arrow keys and Home/End moving along it
function a11yModebar(el) {
  const bar = el.querySelector(".modebar");
  if (!bar) return;
  const buttons = () => [...bar.querySelectorAll(".modebar-btn")];
  if (!bar.dataset.dpexploreToolbar) {
    bar.dataset.dpexploreToolbar = "1";
    bar.setAttribute("role", "toolbar");
    bar.setAttribute("aria-label", "Plot tools");
    bar.addEventListener("keydown", (e) => {
      const all = buttons();
      const i = all.indexOf(document.activeElement);
      if (i < 0) return;
      const n = all.length;
      const j = { ArrowRight: (i + 1) % n, ArrowDown: (i + 1) % n, ArrowLeft: (i - 1 + n) % n,
                  ArrowUp: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
      if (j === undefined) return;
      e.preventDefault();
      all.forEach((b, k) => b.setAttribute("tabindex", k === j ? "0" : "-1"));
      all[j].focus();
    });
  }
  // (plotly redraws its buttons when the toolbar changes: one of them in the Tab order again)
  const all = buttons();
  if (all.filter((b) => b.getAttribute("tabindex") === "0").length !== 1) {
    all.forEach((b, k) => b.setAttribute("tabindex", k === 0 ? "0" : "-1"));
  }
}

// -- audio trace (as Desmos offers): the "Listen" button, once pressed, takes the arrow keys --------
// Left/Right move along the curve (Page Up/Down ten points, Home/End to its ends), Up/Down switch
// curves, Escape stops; each point plays a short tone whose pitch follows y (220-880 Hz over the
// curve's range, on a log scale when the y axis is one) and announces "name: x = …, y = …"
// (a polite live region). The Web Audio API needs no dependency; without it only the words remain.
const A11Y_TONE_HZ = [220, 880];
const A11Y_TONE_S = 0.12;

function a11yAudioTrace(model) {
  const wrap = document.createElement("span");
  const b = a11yButton("Listen", "dpexplore-listen", "aria-pressed");
  b.title = "Audio trace: arrow keys move along the curve, Up/Down change curve, Escape stops";
  const said = document.createElement("span");
  said.className = "dpexplore-sr-only dpexplore-listen-said";
  said.setAttribute("aria-live", "polite");
  wrap.appendChild(b);
  wrap.appendChild(said);
  let on = false, curve = 0, i = 0, audio = null;
  const curves = () => (model.get("data") || []).filter(a11yShown)
    .filter((t) => t.type !== "heatmap" && t.type !== "contour")
    .map((t) => ({ label: a11yPlain(t.name) || "curve", pts: a11yPoints(t) })).filter((c) => c.pts.length);
  const tone = (y, lo, hi, log) => {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      const f = (v) => (log ? Math.log(Math.max(v, 1e-300)) : v);
      const u = hi > lo ? (f(y) - f(lo)) / (f(hi) - f(lo)) : 0.5;
      const hz = A11Y_TONE_HZ[0] * Math.pow(A11Y_TONE_HZ[1] / A11Y_TONE_HZ[0], Math.min(1, Math.max(0, u)));
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.15, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + A11Y_TONE_S);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + A11Y_TONE_S);
      b.dataset.hz = String(Math.round(hz));
    } catch (e) { /* no audio here: the words still come */ }
  };
  const show = () => {
    const cs = curves();
    if (!cs.length) { said.textContent = "No curve to trace."; return; }
    curve = (curve + cs.length) % cs.length;
    const c = cs[curve];
    i = Math.min(Math.max(i, 0), c.pts.length - 1);
    const layout = model.get("plot_layout") || {};
    const X = a11yAxis(layout, "xaxis"), Y = a11yAxis(layout, "yaxis");
    const [x, y] = c.pts[i];
    const ys = c.pts.map((p) => p[1]);
    tone(y, Math.min(...ys), Math.max(...ys), Y.log);
    said.textContent = `${c.label}: ${a11yShortAxis(X.name || "x")} = ${a11yFmt(x)}, ` +
      `${a11yShortAxis(Y.name || "y")} = ${a11yFmt(y)}` + (i === 0 ? " (start)" : i === c.pts.length - 1 ? " (end)" : "");
  };
  const toggle = (state) => {
    on = state;
    b.setAttribute("aria-pressed", on ? "true" : "false");
    b.textContent = on ? "Listening (Esc stops)" : "Listen";
    if (on) { i = 0; show(); } else said.textContent = "Audio trace off.";
  };
  b.addEventListener("click", () => toggle(!on));
  b.addEventListener("keydown", (e) => {
    if (!on) return;
    const n = (curves()[curve] || { pts: [] }).pts.length;
    const moves = { ArrowRight: 1, ArrowLeft: -1, PageUp: 10, PageDown: -10 };
    if (e.key in moves) i += moves[e.key];
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = n - 1;
    else if (e.key === "ArrowUp") { curve += 1; i = 0; } else if (e.key === "ArrowDown") { curve -= 1; i = 0; } else if (e.key === "Escape") { toggle(false); e.preventDefault(); return; } else return;
    e.preventDefault();
    e.stopPropagation();
    show();
  });
  b.addEventListener("blur", () => { if (on) toggle(false); });
  return wrap;
}
