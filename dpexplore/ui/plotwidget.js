// dpexplore PlotlyWidget front end (anywidget ESM).
//
// plotly.js is loaded ONCE per page and shared by every PlotlyWidget on it (a window-level
// promise). Two ways, tried in order:
//   1. a <script> tag to `<baseUrl>/dpexplore/static/plotly.min.js?v=<version>`, served over
//      plain HTTP (cached by the browser) by `dpexplore serve` and by the dpexplore Jupyter
//      server extension;
//   2. if that URL does not answer (a plain JupyterLab without the extension), the JavaScript
//      is requested once from the kernel through a custom widget message and evaluated.
// Then Plotly.newPlot draws the traces the widget was constructed with, and Plotly.react
// redraws in place whenever `data`, `plot_layout` or `config` change.

const KEY = "__dpexplorePlotly";

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

function loadByScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.async = true;
    s.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error("no Plotly")));
    s.onerror = () => { s.remove(); reject(new Error("cannot load " + url)); };
    document.head.appendChild(s);
  });
}

function loadFromKernel(model) {
  return new Promise((resolve, reject) => {
    const onMsg = (msg, buffers) => {
      if (!msg || msg.type !== "dpexplore:plotly-js") return;
      model.off("msg:custom", onMsg);
      try {
        const buf = buffers && buffers[0];
        const code = new TextDecoder().decode(buf.buffer ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf);
        (0, eval)(code); // indirect eval: global scope, sets window.Plotly
        window.Plotly ? resolve(window.Plotly) : reject(new Error("no Plotly"));
      } catch (e) { reject(e); }
    };
    model.on("msg:custom", onMsg);
    model.send({ type: "dpexplore:need-plotly" });
  });
}

function plotly(model) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window[KEY + "Guarded"]) {
    // The dpexplore Voila template may already have started the HTTP request (window[KEY]).
    const viaHttp = window[KEY] || loadByScript(baseUrl() + model.get("_plotly_path"));
    window[KEY] = viaHttp.catch(() => loadFromKernel(model));
    window[KEY + "Guarded"] = true;
    window[KEY].catch(() => { window[KEY] = undefined; window[KEY + "Guarded"] = false; });
  }
  return window[KEY];
}

// Presentation mode (html.dpx-present, set by the app shell's toolbar or present=1 in the URL)
// and the normal minimum text sizes, applied to a COPY of the layout at every draw.
const SIZES = {
  normal: { font: 13, tick: 12, axisTitle: 14, title: 17, legend: 12, annot: 12, line: 0 },
  present: { font: 18, tick: 18, axisTitle: 20, title: 24, legend: 18, annot: 17, line: 3 },
};
const isPresent = () => document.documentElement.classList.contains("dpx-present");
const atLeast = (font, size) => Object.assign({}, font || {}, { size: Math.max((font && font.size) || 0, size) });

function styleLayout(layout, present) {
  const z = present ? SIZES.present : SIZES.normal;
  layout.font = atLeast(layout.font, z.font);
  if (layout.title) {
    if (typeof layout.title === "string") layout.title = { text: layout.title };
    layout.title.font = atLeast(layout.title.font, z.title);
  }
  if (layout.legend === undefined) layout.legend = {};
  layout.legend.font = atLeast(layout.legend.font, z.legend);
  if (!layout.xaxis) layout.xaxis = {};
  if (!layout.yaxis) layout.yaxis = {};
  for (const key of Object.keys(layout)) {
    if (!/^[xy]axis\d*$/.test(key)) continue;
    const ax = layout[key];
    ax.tickfont = atLeast(ax.tickfont, z.tick);
    if (ax.title) {
      if (typeof ax.title === "string") ax.title = { text: ax.title };
      ax.title.font = atLeast(ax.title.font, z.axisTitle);
    }
    if (ax.automargin === undefined) ax.automargin = true;
    // plotly writes minor log labels ("2", "5") at 3/4 of the tick font: 9 px for 12 px ticks
    if (ax.minorloglabels === undefined) ax.minorloglabels = "complete";
  }
  if (Array.isArray(layout.annotations)) {
    layout.annotations = layout.annotations.map((a) => Object.assign({}, a, { font: atLeast(a.font, z.annot) }));
  }
  if (present && layout.margin) {
    // larger text needs room: grow the fixed margins by the same factor (automargin does the rest)
    const m = layout.margin;
    for (const side of ["l", "r", "t", "b"]) if (typeof m[side] === "number") m[side] = Math.round(m[side] * 1.3);
  }
  return layout;
}

function styleTrace(trace, present) {
  if (!present) return trace;
  const mode = trace.mode || "lines";
  if ((trace.type || "scatter") === "scatter" && mode.includes("lines")) {
    trace.line = Object.assign({}, trace.line || {});
    trace.line.width = Math.max(trace.line.width || 2, SIZES.present.line);
  }
  if (trace.marker && typeof trace.marker.size === "number") trace.marker.size = Math.max(trace.marker.size, 9) * 1.3;
  return trace;
}

function withExport(config, name) {
  const c = Object.assign({}, config);
  c.toImageButtonOptions = Object.assign({ format: "png", filename: name, scale: 2 }, c.toImageButtonOptions || {});
  const svg = {
    name: "dpexploreSvg",
    title: "Download plot as SVG",
    icon: window.Plotly && window.Plotly.Icons ? window.Plotly.Icons.disk : undefined,
    click: (gd) => window.Plotly.downloadImage(gd, { format: "svg", filename: name }),
  };
  c.modeBarButtonsToAdd = (c.modeBarButtonsToAdd || []).concat([svg]);
  return c;
}

function render({ model, el }) {
  const div = document.createElement("div");
  div.className = "dpexplore-plot";
  div.dataset.revision = "0";
  div.dataset.renderAt = String(performance.now()); // the widget view exists (bench_browser.py)
  el.appendChild(div);
  let alive = true;

  // What Plotly was last given, per trace: the JSON text and the object itself. A trace whose
  // JSON did not change is handed to Plotly.react as the SAME object (Plotly diffs data by
  // reference, so it skips restyling it). The layout is a FRESH object at every draw, with an
  // explicit height: Plotly keeps the object it is given as gd.layout and Plots.resize (window
  // or container resize) deletes its height, so a reused layout object drew the next redraw at
  // the container's min-height (issue: plots flattened to 120 px on the first slider move).
  let prevTraces = [];
  let prevKey = null; // layout + config + present + size of the last draw
  let drawn = false;  // Plotly.newPlot done
  let stale = false;  // a change arrived while the plot was hidden (closed tab): draw when shown
  const reuse = (prev, value, present) => {
    const text = JSON.stringify(value);
    // Plotly mutates what it is given: hand it copies, never the model's own objects.
    return prev && prev.text === text && prev.present === present ? prev
      : { text, present, obj: styleTrace(JSON.parse(text), present) };
  };
  const visible = () => div.offsetParent !== null && div.clientWidth > 0;
  const sizeDiv = () => {
    const css = model.get("css_height");
    const h = (model.get("plot_layout") || {}).height;
    div.style.height = css || (typeof h === "number" ? h + "px" : "380px");
  };
  sizeDiv();

  const doDraw = () => plotly(model).then((Plotly) => {
    if (!alive) return;
    if (!visible()) { stale = true; return; }
    stale = false;
    const t0 = performance.now();
    const present = isPresent();
    sizeDiv();
    const box = div.getBoundingClientRect();
    const height = Math.max(Math.round(box.height), 150);
    const width = Math.max(Math.round(box.width), 150);
    const traces = (model.get("data") || []).map((t, i) => reuse(prevTraces[i], t, present));
    const layoutText = JSON.stringify(model.get("plot_layout") || {});
    const configText = JSON.stringify(model.get("config") || {});
    const key = layoutText + "\n" + configText + "\n" + present + "\n" + width + "x" + height;
    const same = drawn && traces.length === prevTraces.length &&
      traces.every((t, i) => t === prevTraces[i]) && key === prevKey;
    prevTraces = traces; prevKey = key;
    let done;
    if (same) {
      done = Promise.resolve();
    } else {
      const layout = styleLayout(JSON.parse(layoutText), present);
      layout.height = height;
      layout.width = width;
      layout.autosize = false;
      const title = layout.title && layout.title.text ? String(layout.title.text) : "plot";
      const name = title.replace(/<[^>]*>/g, "").replace(/[^\w\u00c0-\u024f\u0370-\u03ff-]+/g, "_").slice(0, 60) || "plot";
      const config = withExport(JSON.parse(configText), name);
      done = (drawn ? Plotly.react : Plotly.newPlot)(div, traces.map((t) => t.obj), layout, config);
    }
    return done.then(() => {
      drawn = true;
      // timing marks for benchmarks/bench_browser.py: when the redraw started and ended
      div.dataset.drawStart = String(t0);
      div.dataset.drawEnd = String(performance.now());
      div.dataset.revision = String(Number(div.dataset.revision) + 1);
      delete div.dataset.error;
    });
  }).catch((e) => {
    prevTraces = []; prevKey = null; // next draw hands Plotly fresh copies
    div.dataset.error = String(e && e.message ? e.message : e);
    console.error("dpexplore PlotlyWidget:", e);
  });
  let drawing = doDraw();
  // Coalesce bursts of changes (a slider drag): at most one pending redraw, reading the newest state.
  let queued = false;
  const redraw = () => {
    div.dataset.changeAt = String(performance.now()); // a change arrived from the kernel
    if (queued) return;
    queued = true;
    drawing = drawing.then(() => { queued = false; return doDraw(); });
  };
  model.on("change:data", redraw);
  model.on("change:plot_layout", redraw);
  model.on("change:config", redraw);
  model.on("change:css_height", redraw);
  window.addEventListener("dpexplore:present", redraw);

  // The container changed size (window resize, a tab shown): a plot that missed changes while
  // hidden catches up; a drawn one follows the new width and height.
  let ro;
  let lastSize = "";
  if (window.ResizeObserver) {
    ro = new ResizeObserver(() => {
      if (!visible()) return;
      const size = div.clientWidth + "x" + div.clientHeight;
      if (stale || !drawn) { lastSize = size; redraw(); return; }
      if (size === lastSize) return;
      lastSize = size;
      redraw();
    });
    ro.observe(el);
    ro.observe(div);
  }
  return () => {
    alive = false;
    model.off("change:data", redraw);
    model.off("change:plot_layout", redraw);
    model.off("change:config", redraw);
    model.off("change:css_height", redraw);
    window.removeEventListener("dpexplore:present", redraw);
    if (ro) ro.disconnect();
    if (window.Plotly) window.Plotly.purge(div);
  };
}

export default { render };
