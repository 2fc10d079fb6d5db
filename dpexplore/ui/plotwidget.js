// dpexplore PlotlyWidget front end (anywidget ESM).
//
// plotly.js is loaded ONCE per page and shared by every PlotlyWidget on it (a window-level
// promise). Three ways, tried in order:
//   1. a <script> tag to `<baseUrl>/dpexplore/static/plotly.min.js?v=<version>`, served over
//      plain HTTP (cached by the browser) by `dpexplore serve` and by the dpexplore Jupyter
//      server extension (installed enabled with the package);
//   2. if that URL does not answer (a front end without dpexplore's route: VS Code, Colab, a
//      Jupyter server with the extension disabled), the JavaScript is requested once from the
//      kernel through a custom widget message (`dpexplore:need-plotly` -> `dpexplore:plotly-js`)
//      and evaluated;
//   3. if the kernel has not answered within KERNEL_WAIT_MS (a static HTML export has no kernel),
//      the same plotly.js version from its public CDN (cdn.plot.ly), while the kernel may still
//      answer: the first to arrive wins.
// While nothing has arrived after KERNEL_WAIT_MS every undrawn plot says so on the page, and
// when every way has failed it says that plotly.js could not be loaded (and still draws if the
// kernel answers later). Then Plotly.newPlot draws the traces the widget was constructed with,
// and Plotly.react redraws in place whenever `data`, `plot_layout` or `config` change.

const KEY = "__dpexplorePlotly";
const KERNEL_WAIT_MS = 4000;
const CDN = "https://cdn.plot.ly/plotly-";

function baseUrl() {
  const el = document.getElementById("jupyter-config-data");
  if (el) {
    try {
      const cfg = JSON.parse(el.textContent || "{}");
      if (cfg.baseUrl) return cfg.baseUrl.endsWith("/") ? cfg.baseUrl : cfg.baseUrl + "/";
    } catch (e) { /* fall through */ }
  }
  return "/";
}

// Run `fn` with AMD's `define` hidden: plotly.js in a page with require.js (a static export, the
// classic notebook) would register as an anonymous AMD module instead of setting window.Plotly.
function withoutAMD(fn) {
  const d = window.define;
  if (d && d.amd) window.define = undefined;
  try { return fn(); } finally { if (d && d.amd) window.define = d; }
}

function loadByScript(url, hideAMD) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.async = true;
    const d = window.define;
    const restore = () => { if (hideAMD && d && d.amd && window.define === undefined) window.define = d; };
    if (hideAMD && d && d.amd) window.define = undefined;
    s.onload = () => { restore(); window.Plotly ? resolve(window.Plotly) : reject(new Error("no Plotly in " + url)); };
    s.onerror = () => { restore(); s.remove(); reject(new Error("cannot load " + url)); };
    document.head.appendChild(s);
  });
}

function loadFromKernel(model) {
  return new Promise((resolve, reject) => {
    const onMsg = (msg, buffers) => {
      if (!msg || msg.type !== "dpexplore:plotly-js") return;
      model.off("msg:custom", onMsg);
      if (msg.error) { reject(new Error(msg.error)); return; } // the kernel sends it once per page
      try {
        const buf = buffers && buffers[0];
        const code = new TextDecoder().decode(buf.buffer ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf);
        if (!window.Plotly) withoutAMD(() => (0, eval)(code)); // indirect eval: global scope, sets window.Plotly
        window.Plotly ? resolve(window.Plotly) : reject(new Error("no Plotly"));
      } catch (e) { reject(e); }
    };
    model.on("msg:custom", onMsg);
    try { model.send({ type: "dpexplore:need-plotly" }); } catch (e) { model.off("msg:custom", onMsg); reject(e); }
  });
}

// What the undrawn plots say while plotly.js is missing (a status line inside each plot div,
// removed when plotly.js arrives; plots created later get it too).
function showStatus(text, isError) {
  window[KEY + "Status"] = text ? { text, isError } : null;
  for (const div of document.querySelectorAll(".dpexplore-plot")) {
    let p = div.querySelector(":scope > .dpexplore-plot-status");
    if (!text || div.classList.contains("js-plotly-plot")) { if (p) p.remove(); continue; }
    if (!p) {
      p = document.createElement("p");
      p.className = "dpexplore-plot-status";
      p.setAttribute("role", "status");
      p.style.cssText = "margin:12px;padding:8px 12px;border-left:4px solid;font:14px sans-serif;";
      div.appendChild(p);
    }
    p.style.borderColor = isError ? "#c0392b" : "#999";
    p.style.color = isError ? "#c0392b" : "#555";
    p.textContent = text;
  }
}

function cdnUrl(model) {
  const m = /[?&]v=(\d+\.\d+\.\d+)/.exec(model.get("_plotly_path") || "");
  return m ? CDN + m[1] + ".min.js" : null;
}

function fallback(model) {
  return new Promise((resolve) => {
    let done = false, kernelFailed = false, cdnFailed = false, cdnTried = false;
    const ok = (P) => { if (!done) { done = true; showStatus(null); resolve(P); } };
    const failed = () => {
      if (done || !kernelFailed || !cdnFailed) return;
      showStatus("This plot cannot be drawn: plotly.js could not be loaded (no dpexplore server " +
                 "route on this page, no answer from a kernel, and " + CDN.split("/")[2] +
                 " not reachable). Open the notebook in Jupyter with dpexplore installed.", true);
    };
    const tryCdn = () => {
      if (cdnTried || done) return;
      cdnTried = true;
      const url = cdnUrl(model);
      (url ? loadByScript(url, true) : Promise.reject(new Error("no version"))).then(ok, () => {
        cdnFailed = true; failed();
      });
    };
    // a kernel that refuses (the bundle went to another page already) or fails: the CDN at once
    loadFromKernel(model).then(ok, () => { kernelFailed = true; tryCdn(); failed(); });
    setTimeout(() => {
      if (done) return;
      kernelFailed = true; // no answer yet; a late answer still draws (ok() above)
      showStatus("Loading plotly.js (no dpexplore server route here; waiting for the kernel)…", false);
      tryCdn();
    }, KERNEL_WAIT_MS);
  });
}

function plotly(model) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window[KEY + "Guarded"]) {
    // The dpexplore Voila template may already have started the HTTP request (window[KEY]).
    const viaHttp = window[KEY] || loadByScript(baseUrl() + model.get("_plotly_path"), false);
    window[KEY] = viaHttp.catch(() => fallback(model));
    window[KEY + "Guarded"] = true;
    window[KEY].catch(() => { window[KEY] = undefined; window[KEY + "Guarded"] = false; });
  } else if (window[KEY + "Status"]) {
    // a plot created while plotly.js is still missing: say so on it too (its div is in the page
    // once render() returns)
    const st = window[KEY + "Status"];
    setTimeout(() => { if (!window.Plotly && window[KEY + "Status"] === st) showStatus(st.text, st.isError); }, 0);
  }
  return window[KEY];
}

// -- what every figure gets, in the copies handed to Plotly (the model's own values stay) ------
// Text sizes: tick labels >= 12 px in normal mode and >= 18 px in presentation mode (a log axis's
// "10^k" labels are drawn at 1.25x with the exponent at ~0.7x of that, so the tick font is set to
// keep the exponent above the floor too); log axes draw no minor digit labels (plotly draws them at
// 0.75x: 9 px). Titles >= 22 px and lines >= 3 px in presentation mode. Axis titles and tick
// labels get automargin so that nothing overlaps (the margins grow instead).
const SIZES = {
  normal: { font: 14, tick: 14, axisTitle: 15, title: 17, legend: 13, line: 0 },
  present: { font: 20, tick: 21, axisTitle: 22, title: 24, legend: 17, line: 3 },
};

// the name of an annotation that titles one panel of a figure of several (plotly's `grid`)
const PANEL_TITLE = "dpexplore-panel-title";
// the x axis ("x", "x2", …) of the panel that annotation ``a`` titles, or null (not a panel title)
function panelAxis(a) {
  const xa = a && a.name === PANEL_TITLE ? String(a.xref || "").split(" ")[0] : "";
  return /^x\d*$/.test(xa) ? xa : null;
}

// the width one panel of ``layout`` gets out of ``width`` (a `grid` of columns shares it)
function panelWidth(layout, width) {
  const g = layout.grid;
  return g && g.columns > 1 ? width / g.columns : width;
}

function withFont(obj, size, atLeast = true) {
  const f = Object.assign({}, obj && obj.font);
  f.size = atLeast ? Math.max(size, f.size || 0) : size;
  return f;
}

function styleLayout(layout, present) {
  const S = present ? SIZES.present : SIZES.normal;
  const L = layout;
  L.font = withFont(L, S.font, false);
  for (const key of Object.keys(L)) {
    if (!/^[xy]axis\d*$/.test(key) || !L[key] || typeof L[key] !== "object") continue;
    const ax = L[key];
    ax.tickfont = Object.assign({}, ax.tickfont, { size: Math.max(S.tick, (ax.tickfont && ax.tickfont.size) || 0) });
    if (ax.title !== undefined) {
      const t = typeof ax.title === "string" ? { text: ax.title } : Object.assign({}, ax.title);
      t.font = withFont(t, S.axisTitle);
      ax.title = t;
    }
    ax.automargin = true;
    if (ax.type === "log" && ax.minorloglabels === undefined) ax.minorloglabels = "none";
  }
  if (L.title !== undefined) {
    const t = typeof L.title === "string" ? { text: L.title } : Object.assign({}, L.title);
    t.font = withFont(t, S.title);
    L.title = t;
  }
  if (L.legend || L.showlegend !== false) L.legend = Object.assign({}, L.legend, { font: withFont(L.legend, S.legend) });
  if (Array.isArray(L.annotations)) {
    // a panel's title (a figure of several panels, e.g. two runs side by side) is a plot title
    L.annotations = L.annotations.map((a) => Object.assign({}, a, {
      font: withFont(a, a.name === PANEL_TITLE ? S.title : S.legend) }));
  }
  if (present && L.height) L.height = Math.round(L.height * 1.15);
  return L;
}

// A narrow plot (two side by side, or presentation mode's larger text) cannot hold a legend to
// its right: the plot area shrinks to a sliver and the legend runs over the next plot. There, a
// legend left at plotly's default place goes below the plot, in rows; and a title wider than the
// plot is broken at the space nearest its middle (plotly does not wrap titles) and pushes the top
// margin instead of being cut off. In presentation mode a legend outside the axes goes inside
// them instead, into ``corner`` (chosen after a draw: legendCorner), or below the plot when
// ``corner`` is "below".
function fitWidth(layout, width, present, entries, corner, spot) {
  if (!(width > 0)) return layout;
  const L = layout;
  const narrow = present ? 680 : 520;
  const lg = L.legend || {};
  if (corner === "below") legendBelow(L, width, present, entries);
  else if (corner) toCorner(L, corner, spot);
  else if (width < narrow && L.showlegend !== false && lg.x === undefined && lg.y === undefined &&
      lg.orientation === undefined) legendBelow(L, width, present, entries);
  const legendAbove = L.legend && typeof L.legend.y === "number" && L.legend.y >= 1;
  if (!legendAbove && L.title && typeof L.title === "object" && typeof L.title.text === "string" &&
      !L.title.text.includes("<br>")) {
    const size = (L.title.font && L.title.font.size) || 17;
    const text = breakAtMiddle(L.title.text, size, width - 60);
    if (text !== L.title.text) {
      L.title = Object.assign({}, L.title, { text });
      L.title.automargin = true;
      L.title.yref = "paper";
      L.title.xref = "paper";   // centred over the plot area, clear of the y axis title
      L.title.x = 0.5;
    }
  }
  // axis titles: plotly neither wraps nor clips them, so a long x axis title of a narrow plot ran
  // into the next plot's (two plots side by side in presentation mode); a panel's title likewise
  const panel = panelWidth(L, width);
  for (const key of Object.keys(L)) {
    if (!/^xaxis\d*$/.test(key) || !L[key] || !L[key].title || typeof L[key].title.text !== "string") continue;
    const t = L[key].title;
    if (!t.text.includes("<br>")) {
      const text = breakAtMiddle(t.text, (t.font && t.font.size) || 14, panel - 140);
      if (text !== t.text) L[key] = Object.assign({}, L[key], { title: Object.assign({}, t, { text }) });
    }
  }
  if (Array.isArray(L.annotations)) {
    L.annotations = L.annotations.map((a) => {
      if (a.name !== PANEL_TITLE || typeof a.text !== "string" || a.text.includes("<br>")) return a;
      const text = breakAtMiddle(a.text, (a.font && a.font.size) || 17, panel - 40);
      return text === a.text ? a : Object.assign({}, a, { text });
    });
    // annotations push no margin: the top margin holds the panels' titles (and the figure's
    // title, if it has one, goes above them: automargin, padded by their height)
    let room = 0;
    for (const a of L.annotations) {
      if (a.name !== PANEL_TITLE) continue;
      const size = (a.font && a.font.size) || 17;
      room = Math.max(room, Math.ceil((String(a.text).split("<br>").length * 1.3 * size) + 8));
    }
    if (room && L.title && typeof L.title === "object" && L.title.text) {
      L.title = Object.assign({}, L.title, { automargin: true, xref: "paper", x: 0.5, yref: "paper", y: 1,
                                             yanchor: "bottom", pad: { b: room } });
    } else if (room) {
      L.margin = Object.assign({}, L.margin, { t: Math.max((L.margin && L.margin.t) || 0, room + 6) });
    }
  }
  return L;
}

// the legend at the bottom of the figure (container units), in rows, with the bottom margin
// reserved for it: one row per entry at most, plus the x axis's tick labels and title above it
function legendBelow(L, width, present, entries) {
  const lg = L.legend || {};
  const size = (lg.font && lg.font.size) || (present ? 17 : 13);
  // the rows a horizontal legend of these entries wraps into (each ~0.55 em a character, plus
  // its symbol), packed greedily as plotly does
  let rows = 1, used = 0;
  for (const name of entries) {
    const w = String(name).replace(/<[^>]*>/g, "").length * 0.55 * size + 50;
    if (used > 0 && used + w > width - 20) { rows += 1; used = 0; }
    used += w;
  }
  const m = Object.assign({ l: 80, r: 80, t: 100, b: 80 }, L.margin);
  m.b = Math.round(rows * size * 1.45 + (present ? 85 : 75));
  L.margin = m;
  L.legend = Object.assign({}, lg, { orientation: "h", x: 0, xanchor: "left", xref: "paper",
                                     y: 0, yanchor: "bottom", yref: "container" });
  return L;
}

// Presentation mode (and plots side by side that fill the window's height): a legend beside the
// axes took a third of a projector's width, below them a third of its height. It goes inside the
// axes, on a white ground, into the corner where it covers the fewest data points (legendCorner,
// measured after a draw).
const CORNERS = {
  tr: { x: 0.995, y: 0.995, xanchor: "right", yanchor: "top" },
  tl: { x: 0.005, y: 0.995, xanchor: "left", yanchor: "top" },
  br: { x: 0.995, y: 0.005, xanchor: "right", yanchor: "bottom" },
  bl: { x: 0.005, y: 0.005, xanchor: "left", yanchor: "bottom" },
};

// ``corner``: a key of CORNERS (the plot area's corners), or one of legendCorner's keys with its
// ``spot`` (a corner of one panel of a figure of several, in paper units)
function toCorner(L, corner, spot) {
  L.legend = Object.assign({}, L.legend, spot || CORNERS[corner.slice(0, 2)] || CORNERS.tr, {
    orientation: "v", xref: "paper", yref: "paper",
    bgcolor: "rgba(255,255,255,0.7)", bordercolor: "#999999", borderwidth: 1 });
  return L;
}

// whether a figure's legend may go into a corner: shown, placed by the app outside the axes (or
// left at plotly's default place, to their right), its panels (if several) side by side (a
// corner of one of them: legendCorner), and no heatmap or contour fills the axes
function cornerable(L, traces) {
  if (L.showlegend === false || (L.grid && L.grid.rows > 1)) return false;
  const lg = L.legend || {};
  const inside = (v) => typeof v === "number" && v >= 0 && v <= 1;
  if (inside(lg.x) && inside(lg.y) && (lg.xref || "paper") === "paper" && (lg.yref || "paper") === "paper") return false;
  return !traces.some((t) => t.type === "heatmap" || t.type === "contour");
}

// The places a legend may take inside the axes of a drawn figure: each corner of each panel,
// keyed "tr", "tl", "br", "bl" (a figure of one panel) or "tr@x2" (the corner of the panel on
// axis x2), with its rectangle in pixels from the plot area's top left and its place in paper units
function cornerSpots(gd) {
  const fl = gd._fullLayout, s = fl._size;
  const subs = Object.values(fl._plots || {}).filter((p) => p.xaxis && p.yaxis && p.xaxis._length > 0)
    .sort((a, b) => a.xaxis._offset - b.xaxis._offset || a.yaxis._offset - b.yaxis._offset);
  const out = {};
  for (const p of subs) {
    const xa = p.xaxis, ya = p.yaxis, xd = xa.domain || [0, 1], yd = ya.domain || [0, 1];
    const r = [xa._offset - s.l, ya._offset - s.t, xa._offset - s.l + xa._length, ya._offset - s.t + ya._length];
    for (const c of ["tr", "tl", "br", "bl"]) {
      const right = c[1] === "r", top = c[0] === "t";
      out[subs.length > 1 ? c + "@" + xa._id : c] = { rect: r, spot: {
        x: right ? xd[1] - 0.005 * (xd[1] - xd[0]) : xd[0] + 0.005 * (xd[1] - xd[0]), xanchor: right ? "right" : "left",
        y: top ? yd[1] - 0.005 * (yd[1] - yd[0]) : yd[0] + 0.005 * (yd[1] - yd[0]), yanchor: top ? "top" : "bottom" } };
    }
  }
  return out;
}

// The corner (a key of cornerSpots: "tr", "tl", "br", "bl", or a panel's "bl@x2") where a legend
// of ``box`` pixels (w, h) covers the fewest points of the drawn traces (lines sampled every
// 6 px, bars from base to top, annotations as all points), as {corner, spot}; corner "below" when
// even that corner covers more than 8 % of them (its ground lets the lines behind it show
// through), or the legend would fill a third of every panel's axes. ``current`` stays unless
// another corner covers 0.2 % fewer (a legend does not hop between corners on every slider step).
function legendCorner(gd, box, current) {
  const fl = gd._fullLayout;
  if (!fl || !fl._size) return { corner: current };
  const s = fl._size;
  const w = box.w + 10, h = box.h + 10;
  const spots = cornerSpots(gd);
  const rects = {};
  for (const [k, v] of Object.entries(spots)) {
    const [x0, y0, x1, y1] = v.rect, pw = x1 - x0, ph = y1 - y0;
    if (w * h > pw * ph / 3 || w > pw * 0.7 || h > ph * 0.8) continue;
    const right = k[1] === "r", top = k[0] === "t";
    rects[k] = [right ? x1 - w : x0, top ? y0 : y1 - h, right ? x1 : x0 + w, top ? y0 + h : y1];
  }
  if (!Object.keys(rects).length) return { corner: "below" };
  const count = {};
  for (const k in rects) count[k] = 0;
  let total = 0;
  const hit = (X, Y, weight = 1) => {
    if (!isFinite(X) || !isFinite(Y)) return;
    total += weight;
    for (const k in rects) {
      const r = rects[k];
      if (X >= r[0] && X <= r[2] && Y >= r[1] && Y <= r[3]) count[k] += weight;
    }
  };
  for (const t of gd._fullData || []) {
    if (t.visible !== true || !t.x || !t.y) continue;
    const xa = fl[(t.xaxis || "x").replace("x", "xaxis")], ya = fl[(t.yaxis || "y").replace("y", "yaxis")];
    if (!xa || !ya || !xa.c2p || !ya.c2p) continue;
    const px = (v) => xa._offset - s.l + xa.c2p(xa.d2c ? xa.d2c(v) : v);
    const py = (v) => ya._offset - s.t + ya.c2p(ya.d2c ? ya.d2c(v) : v);
    const n = Math.min(t.x.length, t.y.length);
    const lines = t.type === "scatter" && String(t.mode || "lines").includes("lines");
    let prev = null;
    for (let i = 0; i < n; i++) {
      if (t.x[i] === null || t.y[i] === null) { prev = null; continue; }
      const X = px(t.x[i]), Y = py(t.y[i]);
      if (t.type === "bar") {
        const Y0 = py(0);
        for (let k = 0; k <= 10; k++) hit(X, Y0 + (Y - Y0) * k / 10);
        continue;
      }
      if (lines && prev && isFinite(prev[0]) && isFinite(prev[1]) && isFinite(X) && isFinite(Y)) {
        const steps = Math.min(200, Math.floor(Math.hypot(X - prev[0], Y - prev[1]) / 6));
        for (let k = 1; k < steps; k++) hit(prev[0] + (X - prev[0]) * k / steps, prev[1] + (Y - prev[1]) * k / steps);
      }
      hit(X, Y);
      prev = [X, Y];
    }
  }
  const area = gd.getBoundingClientRect();
  gd.querySelectorAll(".annotation").forEach((a) => {
    const r = a.getBoundingClientRect();
    if (!(r.width > 0)) return;
    // (a panel's title sits on its axes' top edge: touching is not covering, hence the 2 px)
    const X = r.left - area.left - s.l, Y = r.top - area.top - s.t;
    for (const k in rects) {
      const q = rects[k];
      if (X < q[2] - 2 && X + r.width > q[0] + 2 && Y < q[3] - 2 && Y + r.height > q[1] + 2) count[k] += total + 1;
    }
  });
  const keys = Object.keys(rects);
  let best = current in count ? current : keys.reduce((m, k) => (count[k] < count[m] ? k : m), keys[0]);
  for (const k of keys) if (count[k] < count[best] - 0.002 * total) best = k;
  gd.dataset.legendCover = JSON.stringify({ count, total });  // what the choice was made from (tests read it)
  return count[best] <= Math.max(2, 0.08 * total) ? { corner: best, spot: spots[best].spot } : { corner: "below" };
}

// ``text`` broken into lines at spaces (as evenly as the spaces allow) if it is wider than
// ``room`` pixels at font ``size`` (~0.6 em a character); unchanged otherwise
function breakAtMiddle(text, size, room) {
  const width = text.replace(/<[^>]*>/g, "").length * 0.6 * size;
  if (width <= room || room <= 0) return text;
  const lines = Math.min(4, Math.ceil(width / room));
  const cut = [];
  for (let k = 1; k < lines; k++) {
    const want = (k * text.length) / lines;
    let best = -1;
    for (let i = 0; i < text.length; i++) {
      if (text[i] === " " && !cut.includes(i) && (best < 0 || Math.abs(i - want) < Math.abs(best - want))) best = i;
    }
    if (best > 0) cut.push(best);
  }
  let out = text;
  for (const i of cut.sort((a, b) => b - a)) out = out.slice(0, i) + "<br>" + out.slice(i + 1);
  return out;
}

// In presentation mode a trace's legend entry may be shorter (``meta.present_name``: a long
// legend of full citations fits in no corner of the axes and pushed the plot down); the plot's
// description keeps the full name.
function styleTrace(t, present) {
  if (!present) return t;
  const out = Object.assign({}, t);
  if (out.meta && typeof out.meta.present_name === "string") out.name = out.meta.present_name;
  const mode = out.mode || "lines";
  if ((out.type || "scatter") === "scatter" && mode.includes("lines")) {
    out.line = Object.assign({}, out.line, { width: Math.max(3, (out.line && out.line.width) || 2) });
  }
  if (mode.includes("markers")) {
    out.marker = Object.assign({}, out.marker, { size: Math.max(10, (out.marker && out.marker.size) || 6) });
  }
  return out;
}

function styleConfig(config, Plotly) {
  const C = config;
  // never a button that uploads the figure to Plotly Cloud (plotly.js 4's "Share chart...", on by
  // default), whatever config a caller passed (PLOT_CONFIG in plotwidget.py)
  C.showSendToCloud = false;
  // PNG from the camera button; SVG from a second button (vector figures for slides and papers)
  C.toImageButtonOptions = Object.assign({ format: "png", scale: 2 }, C.toImageButtonOptions);
  C.modeBarButtonsToAdd = (C.modeBarButtonsToAdd || []).concat([{
    name: "Download plot as SVG",
    icon: Plotly.Icons.camera,
    click: (gd) => Plotly.downloadImage(gd, { format: "svg", filename: (C.toImageButtonOptions.filename || "dpexplore-plot") }),
  }]);
  return C;
}

// A legend below the plot (y < 0, paper units) is placed in proportion to the plot's height while
// the x axis title sits a fixed number of pixels below the axis: with larger text (presentation
// mode) or a shorter plot they collide. After a draw the two are measured; an overlap moves the
// legend down by that much (margins grow automatically) and the shift is kept for later redraws
// of the same layout.
function legendOverlap(gd) {
  const fl = gd._fullLayout;
  if (!fl || !fl.showlegend || !fl.legend || !(fl.legend.y < 0) || !fl._size) return 0;
  const bg = gd.querySelector(".legend rect.bg");
  if (!bg) return 0;
  const L = bg.getBoundingClientRect();
  let over = 0;
  gd.querySelectorAll('[class^="g-x"][class$="title"] text').forEach((t) => {
    const T = t.getBoundingClientRect();
    if (T.width > 0 && T.left < L.right && L.left < T.right && T.bottom > L.top && T.top < L.bottom) {
      over = Math.max(over, T.bottom - L.top);
    }
  });
  return over > 0 ? over / fl._size.h : 0;
}

// the legend at the right of the plot, in one column
function toSide(layout) {
  layout.legend = Object.assign({}, layout.legend, { orientation: "v", x: 1.02, xanchor: "left", xref: "paper",
                                                     y: 1, yanchor: "top", yref: "paper" });
  return layout;
}

// the y axis titles given as {axis key: text}
function wrapTitles(layout, titles) {
  for (const [key, text] of Object.entries(titles)) {
    if (layout[key] && layout[key].title) layout[key] = Object.assign({}, layout[key], { title: Object.assign({}, layout[key].title, { text }) });
  }
  return layout;
}

// below this width (px) a figure's panels side by side are stacked (restack)
const STACK_BELOW_PX = 560;

// The panels of a one-row grid of ``n`` columns, one under the other: the grid becomes n rows
// of independent axes; a panel that shared the first y axis (the "coupled" pattern) gets a copy
// of it, and its traces and its title move with it; the legend leaves the axes (legendBelow).
// Returns the traces to draw (copies where they changed; the model's own are never touched).
function restack(data, layout, n) {
  const L = layout;
  L.grid = Object.assign({}, L.grid, { rows: n, columns: 1, pattern: "independent", ygap: 0.35 });
  const yOf = (xa) => (xa && xa !== "x" ? "y" + xa.slice(1) : "y");
  for (let i = 2; i <= n; i++) {
    if (!L["yaxis" + i]) L["yaxis" + i] = Object.assign({}, L.yaxis, { anchor: "x" + i });
  }
  if (Array.isArray(L.annotations)) {
    L.annotations = L.annotations.map((a) => (panelAxis(a) ? Object.assign({}, a, { yref: yOf(panelAxis(a)) + " domain" }) : a));
  }
  L.legend = Object.assign({}, L.legend, { bgcolor: "rgba(0,0,0,0)", borderwidth: 0 });
  return data.map((t) => {
    const y = yOf(t.xaxis);
    return (t.yaxis || "y") === y ? t : Object.assign({}, t, { yaxis: y });
  });
}

// the least height of a plot's axes (normal, presentation mode), and the most a plot may grow for it
const MIN_AREA_PX = [170, 190];
// the least and most height of a plot whose css_height is "fill" (normal, presentation mode: the
// larger text needs a taller plot for its axes, MIN_AREA_PX)
const FILL_PX = { normal: [300, 760], present: [470, 760] };
const MAX_GROW_PX = 260;

// Number arrays arrive as raw float64 bytes, {dpexplore_f64: DataView} (plotwidget.py
// traces_to_wire: no JSON of ~100 kB per slider step in the kernel and the server). They become
// plain arrays again here, in the model's own trace objects, before anything reads them: NaN is
// null (a gap), exactly what the JSON lists held.
const WIRE_F64 = "dpexplore_f64";
function wireNumbers(v) {
  const b = v[WIRE_F64];
  const bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const a = new Float64Array(bytes.slice().buffer);  // a copy: aligned, whatever the offset
  const out = new Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Number.isNaN(a[i]) ? null : a[i];
  return out;
}
function unwire(v) {
  if (Array.isArray(v)) {  // a heatmap's z: rows
    for (let i = 0; i < v.length; i++) if (v[i] && typeof v[i] === "object") v[i] = unwire(v[i]);
    return v;
  }
  if (!v || typeof v !== "object" || ArrayBuffer.isView(v)) return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === WIRE_F64) return wireNumbers(v);
  for (const k of keys) v[k] = unwire(v[k]);
  return v;
}
function unwireTraces(model) {
  const data = model.get("data");
  if (Array.isArray(data)) data.forEach(unwire);
}

function render({ model, el }) {
  dpexploreRejoin(model); // rejoin.js: messages from the kernel, if anywidget gave up on the model
  // first: every other reader of "data" (the redraw, plot_a11y.js) then sees plain arrays
  const unwireData = () => unwireTraces(model);
  unwireData();
  model.on("change:data", unwireData);
  const div = document.createElement("div");
  div.className = "dpexplore-plot";
  div.dataset.revision = "0";
  div.dataset.renderAt = String(performance.now()); // the widget view exists (bench_browser.py)
  el.appendChild(div);
  const describe = plotA11y(model, el); // name, description, data table (plot_a11y.js)
  let alive = true;

  // What Plotly was last given, per trace: the JSON text and the object itself. A trace whose
  // JSON did not change is handed to Plotly.react as the SAME object (Plotly diffs data by
  // reference, so it skips restyling it). The layout is different: Plotly writes into the layout
  // object it is given (Plots.resize, called by the ResizeObserver and by `responsive`, deletes
  // `height` from it), so handing the previous layout object back made the next data-only redraw
  // size the plot to its container's min-height (every plot collapsed to 120 px after the first
  // slider move). The layout is therefore always a fresh copy of the model's; Plotly diffs layouts
  // by value, so that costs one JSON.parse of a small object.
  let prevTraces = [];
  let prevLayoutText = null;
  let prevConfigText = null;
  let stale = false; // a change arrived while the plot was hidden (a closed tab)
  let config = null;  // {text, obj}: the config Plotly was last given
  let legendFix = null;  // {key: layout text, dy}: a legend below the plot moved down by dy (paper)
  let growFix = null;  // {key: layout text, dh}: a plot sized by its layout grown by dh px (MIN_AREA_PX)
  let sideFix = null;  // {key: layout text}: a window-sized plot's legend moved from below to its right
  let wrapFix = null;  // {key: layout text, titles: {yaxis…: text}}: y axis titles broken into lines
  let cornerFix = null;  // {size: "WxH", corner}: presentation mode's legend corner, kept across steps
  // A trace hidden from its legend (a click: Plotly writes visible "legendonly" into the object
  // it was given) stays hidden after a step: an unchanged trace is the same object, and a changed
  // one (a new object) takes the state of the trace of its name. Before, a step brought back the
  // traces whose data changed and left the others hidden (the group-privacy lab: the histogram
  // came back, the density did not).
  const reuse = (prev, value, present, legendOnly) => {
    const text = JSON.stringify(value);
    // Plotly mutates what it is given: hand it copies, never the model's own objects.
    if (prev && prev.text === text && prev.present === present) return prev;
    const obj = styleTrace(JSON.parse(text), present);
    if (obj.name && legendOnly.has(obj.name) && (obj.visible === undefined || obj.visible === true)) obj.visible = "legendonly";
    return { text, present, obj };
  };
  // not displayed (display:none up the tree, e.g. a closed tab); a detached div is drawn as usual
  const hidden = () => div.isConnected && div.offsetParent === null;
  // css_height (e.g. "clamp(300px, calc(100vh - 250px), 720px)") sizes the div to the window;
  // "fill": from the div's top to the window's bottom, within FILL_PX (a plot under controls and
  // text of varying height: two plots side by side in a tab). Measured once per window size and
  // mode, so a slider step never changes it.
  let fillAt = "";
  let fillBase = 0, fillGrow = 0;  // the measured "fill" height, and what MIN_AREA_PX added to it
  // (stacked panels, below: a window's height each)
  const fillWanted = () => {
    const top = div.getBoundingClientRect().top + window.scrollY;
    const [lo, hi] = FILL_PX[model.get("present") ? "present" : "normal"];
    return top > 0 ? Math.round(Math.min(hi, Math.max(lo, window.innerHeight - top - 12))) * Math.max(1, stacked()) : 0;
  };
  // panels side by side (plotly's grid, one row) are stacked in a narrow window (a reader zoomed
  // to 400 %): the number of panels then, else 0; the div is that many window heights tall
  const stacked = () => {
    const g = (model.get("plot_layout") || {}).grid;
    const w = div.getBoundingClientRect().width;
    return g && g.rows === 1 && g.columns > 1 && w > 0 && w < STACK_BELOW_PX ? g.columns : 0;
  };
  const sizeDiv = () => {
    const ch = model.get("css_height") || "";
    const n = ch && ch !== "fill" ? stacked() : 0;
    if (ch !== "fill") { div.style.height = n ? `calc(${n} * (${ch}))` : ch; fillAt = ""; return; }
    const key = window.innerWidth + "x" + window.innerHeight + (model.get("present") ? "p" : "");
    if (!div.style.height) div.style.height = FILL_PX.normal[0] + "px";
    if (fillAt === key || hidden() || !div.isConnected) return;
    const h = fillWanted();
    if (!h) return;
    div.style.height = h + "px";
    fillBase = h; fillGrow = 0;
    fillAt = key;
  };
  sizeDiv();
  // the page above a "fill" plot may still be settling when it is first drawn (the head, the
  // panels, other widgets): measured again 1 s and 3 s after its first draw, before a visitor
  // moves a slider; later steps never change it
  const refill = () => {
    if (!alive || model.get("css_height") !== "fill" || hidden()) return;
    const h = fillWanted();
    if (h && Math.abs(h - fillBase) > 4) { fillAt = ""; redraw(); }
  };

  const doDraw = (first) => plotly(model).then((Plotly) => {
    if (!alive) return;
    if (!first && hidden()) { stale = true; return; } // drawn when shown (ResizeObserver below)
    stale = false;
    const t0 = performance.now();
    const present = !!model.get("present");
    const legendOnly = new Set(prevTraces.filter((t) => t.obj.visible === "legendonly" && t.obj.name).map((t) => t.obj.name));
    const traces = (model.get("data") || []).map((t, i) => reuse(prevTraces[i], t, present, legendOnly));
    const rawLayout = JSON.stringify(model.get("plot_layout"));
    sizeDiv();
    // with css_height the plot is drawn at its div's height (0 while hidden: the layout's height)
    const box = div.getBoundingClientRect();
    // Plotly is always given an explicit size, never asked to autosize: Plots.resize (autosize)
    // measured a plot whose height had just changed (presentation mode) at its container's
    // min-height, 120 px. The width is the div's (when displayed), the height the div's CSS height
    // (css_height: the shell fits the window) or the layout's.
    const shown = !hidden() && box.width > 0;
    const fill = !!model.get("css_height") && shown && box.height > 0;
    const fillHeight = fill ? Math.max(160, Math.round(box.height)) : 0;
    const fillWidth = shown ? Math.round(box.width) : 0;
    const layoutText = rawLayout + (present ? "#present" : "") + "#" + fillWidth + "x" + fillHeight;
    const configText = JSON.stringify(model.get("config"));
    const same = !first && traces.length === prevTraces.length &&
      traces.every((t, i) => t === prevTraces[i]) && layoutText === prevLayoutText &&
      configText === prevConfigText;
    prevTraces = traces; prevLayoutText = layoutText; prevConfigText = configText;
    const fn = first ? Plotly.newPlot : Plotly.react;
    let done = Promise.resolve();
    if (!same) {
      const layout = styleLayout(JSON.parse(rawLayout), present);
      const panels = shown ? stacked() : 0;
      if (!layout.height) layout.height = 380;
      if (fill) layout.height = fillHeight; // the div's CSS height (the shell: fit the window)
      const entries = traces.filter((t) => t.obj.showlegend !== false && t.obj.name).map((t) => t.obj.name);
      const size = fillWidth + "x" + fillHeight + (present ? "p" : "");  // a corner chosen in normal mode is not kept in presentation mode
      // (also in normal mode for plots side by side under controls: "fill")
      const corner = (present || model.get("css_height") === "fill") && fillWidth && !panels &&
        cornerable(layout, traces.map((t) => t.obj)) ?
        (cornerFix && cornerFix.size === size ? cornerFix.corner : "tr") : null;
      const spot = corner && cornerFix && cornerFix.size === size ? cornerFix.spot : null;
      if (panels && fillWidth) legendBelow(layout, fillWidth, present, entries);
      // stacked before fitWidth, which breaks the panels' titles at their width (then the window's)
      const data = panels ? restack(traces.map((t) => t.obj), layout, panels) : traces.map((t) => t.obj);
      if (fillWidth) { layout.width = fillWidth; layout.autosize = false;
        fitWidth(layout, fillWidth, present, entries, corner, spot);
      }
      // the config object (with its SVG button's click function) is built once per config text:
      // Plotly.react compares configs, and a new function object made every redraw a full newPlot
      // (~250 ms of a 60 ms step on the demo)
      if (!config || config.text !== configText) config = { text: configText, obj: styleConfig(JSON.parse(configText), Plotly) };
      const fix = legendFix && legendFix.key === layoutText ? legendFix : null;
      const shift = (l, dy) => { l.legend = Object.assign({}, l.legend, { y: (l.legend && typeof l.legend.y === "number" ? l.legend.y : -0.1) - dy }); return l; };
      if (fix) shift(layout, fix.dy);
      const baseHeight = layout.height;
      let grown = growFix && growFix.key === layoutText ? growFix.dh : 0;
      if (!fill && grown) layout.height = baseHeight + grown;
      if (sideFix && sideFix.key === layoutText) toSide(layout);
      if (wrapFix && wrapFix.key === layoutText) wrapTitles(layout, wrapFix.titles);
      done = fn(div, data, layout, config.obj);
      if (shown) {
        // After every draw, measure and fix what large text or a narrow plot broke, one fix per
        // redraw, until nothing is left (at most 8 redraws; each fix is kept for later redraws of
        // the same layout and size, so a data-only step redraws once):
        // 1. a legend below the plot that runs into the x axis title moves down (the legend's
        //    place is in plot-area units, so a new row or a shorter plot brings them together);
        // 2. a plot whose axes are left less than MIN_AREA_PX grows by the difference (a plot
        //    sized by its layout, or a "fill" plot), or (a plot sized by the window, ≥ 700 px wide) gets its legend
        //    moved from below to its right;
        // 3. a y axis title longer than its axis (plotly cuts it off) is broken into lines.
        let total = fix ? fix.dy : 0;
        let cur = layout;
        const minArea = MIN_AREA_PX[present ? 1 : 0];
        let placed = corner;
        const nextFix = () => {
          const fl = div._fullLayout;
          if (!fl || !fl._size) return false;
          if (placed && placed !== "below") {
            // presentation mode: the legend in the corner where it hides least, or below the
            // plot (then for good, at this size: its margin has grown for it)
            const bg = div.querySelector(".legend rect.bg");
            const b = bg ? bg.getBoundingClientRect() : null;
            const got = fl.showlegend && b && b.width > 0 ? legendCorner(div, { w: b.width, h: b.height }, placed) : { corner: placed };
            const want = got.corner;
            cornerFix = { size, corner: want, spot: got.spot || (cornerFix && cornerFix.corner === want ? cornerFix.spot : null) };
            div.dataset.legendCorner = want;
            if (want !== placed) {
              placed = want;
              cur = JSON.parse(JSON.stringify(cur));
              if (want === "below") legendBelow(cur, fillWidth, present, entries); else toCorner(cur, want, cornerFix.spot);
              return true;
            }
          }
          const dy = legendOverlap(div);
          if (dy > 0) {
            total += dy + 0.04;
            legendFix = { key: layoutText, dy: total };
            cur = shift(JSON.parse(JSON.stringify(cur)), dy + 0.04);
            return true;
          }
          if (fl._size.h < minArea - 1) {
            if (!fill && grown < MAX_GROW_PX) {
              grown = Math.min(MAX_GROW_PX, grown + Math.ceil(minArea - fl._size.h) + 4);
              growFix = { key: layoutText, dh: grown };
              cur = Object.assign(JSON.parse(JSON.stringify(cur)), { height: baseHeight + grown });
              return true;
            }
            if (model.get("css_height") === "fill" && fillGrow < MAX_GROW_PX) {
              // a "fill" plot low on the page: taller than the window's rest (the page scrolls)
              fillGrow = Math.min(MAX_GROW_PX, fillGrow + Math.ceil(minArea - fl._size.h) + 4);
              div.style.height = (fillBase + fillGrow) + "px";
              cur = Object.assign(JSON.parse(JSON.stringify(cur)), { height: fillBase + fillGrow });
              return true;
            }
            if (fill && fl.legend && fl.legend.y < 0 && fillWidth >= 700 && !(sideFix && sideFix.key === layoutText)) {
              sideFix = { key: layoutText };
              cur = toSide(JSON.parse(JSON.stringify(cur)));
              return true;
            }
          }
          const titles = {};
          div.querySelectorAll('[class^="g-y"][class$="title"]').forEach((g) => {
            const m = /^g-(y\d*)title$/.exec(g.getAttribute("class") || "");
            const t = g.querySelector("text");
            const key = m ? "yaxis" + m[1].slice(1) : null;
            const ax = key && cur[key];
            if (!t || !ax || !ax.title || typeof ax.title.text !== "string" || ax.title.text.includes("<br>")) return;
            if (t.getBoundingClientRect().height > fl._size.h + 8) {
              const text = breakAtMiddle(ax.title.text, (ax.title.font && ax.title.font.size) || 15, Math.max(fl._size.h, 60));
              if (text !== ax.title.text) titles[key] = text;
            }
          });
          if (!Object.keys(titles).length) return false;
          wrapFix = { key: layoutText, titles: Object.assign({}, wrapFix && wrapFix.key === layoutText ? wrapFix.titles : {}, titles) };
          cur = wrapTitles(JSON.parse(JSON.stringify(cur)), titles);
          return true;
        };
        const settle = (n) => (n < 8 && nextFix() ? Plotly.react(div, data, cur, config.obj).then(() => settle(n + 1)) : null);
        if (!fix) legendFix = null;
        done = done.then(() => settle(0));
      }
    }
    return done.then(() => {
      // timing marks for benchmarks/bench_browser.py: when the redraw started and ended
      div.dataset.drawStart = String(t0);
      div.dataset.drawEnd = String(performance.now());
      div.dataset.revision = String(Number(div.dataset.revision) + 1);
      delete div.dataset.error;
    });
  }).catch((e) => {
    prevTraces = []; prevLayoutText = null; prevConfigText = null; config = null; // next draw starts afresh
    div.dataset.error = String(e && e.message ? e.message : e);
    console.error("dpexplore PlotlyWidget:", e);
  });
  let drawing = doDraw(true);
  drawing.then(() => { setTimeout(refill, 1000); setTimeout(refill, 3000); });
  // Coalesce bursts of changes (a slider drag): at most one pending redraw, reading the newest state.
  let queued = false;
  // the traces the plot shows once it is drawn: what a hidden plot (a closed tab) will draw when
  // shown (tests and benchmarks read it; Plotly's own `div.data` is what was last drawn)
  div._dpexploreLatest = model.get("data");
  const redraw = () => {
    div.dataset.changeAt = String(performance.now()); // a change arrived from the kernel
    div.dataset.changes = String(Number(div.dataset.changes || 0) + 1);
    div._dpexploreLatest = model.get("data");
    describe();
    if (queued) return;
    queued = true;
    drawing = drawing.then(() => { queued = false; return doDraw(false); });
  };
  model.on("change:data", redraw);
  model.on("change:plot_layout", redraw);
  model.on("change:config", redraw);
  model.on("change:present", redraw);
  model.on("change:css_height", redraw);

  // Follow the container's width (window resize, a panel opening), and draw a plot that changed
  // while it was hidden as soon as it is shown again.
  let ro;
  if (window.ResizeObserver) {
    // Follow the div's size (window resize, a panel opening, a tab shown): a redraw at the new
    // size (doDraw measures it); a plot that changed while it was hidden catches up when shown.
    let lastSize = "";
    ro = new ResizeObserver(() => {
      if (hidden()) return;
      const b = div.getBoundingClientRect();
      const size = Math.round(b.width) + (model.get("css_height") ? "x" + Math.round(b.height) : "");
      if (!stale && (size === lastSize || !div.classList.contains("js-plotly-plot"))) { lastSize = size; return; }
      lastSize = size;
      redraw();
    });
    ro.observe(el);
  }
  // a "fill" plot follows the window's height too (its div's width may stay the same)
  const onWindow = () => { if (model.get("css_height") === "fill" && !hidden()) redraw(); };
  window.addEventListener("resize", onWindow);
  return () => {
    alive = false;
    model.off("change:data", unwireData);
    model.off("change:data", redraw);
    model.off("change:plot_layout", redraw);
    model.off("change:config", redraw);
    model.off("change:present", redraw);
    model.off("change:css_height", redraw);
    if (ro) ro.disconnect();
    window.removeEventListener("resize", onWindow);
    if (window.Plotly) window.Plotly.purge(div);
  };
}

export default { render };
