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

function render({ model, el }) {
  const div = document.createElement("div");
  div.className = "dpexplore-plot";
  div.dataset.revision = "0";
  div.dataset.renderAt = String(performance.now()); // the widget view exists (bench_browser.py)
  el.appendChild(div);
  let alive = true;

  // What Plotly was last given, per trace: the JSON text and the object itself. A trace whose
  // JSON did not change is handed to Plotly.react as the SAME object (Plotly diffs data by
  // reference, so it skips restyling it); layout and config likewise.
  let prevTraces = [];
  let prevLayout = null;
  let prevConfig = null;
  const reuse = (prev, value) => {
    const text = JSON.stringify(value);
    // Plotly mutates what it is given: hand it copies, never the model's own objects.
    return prev && prev.text === text ? prev : { text, obj: JSON.parse(text) };
  };

  const doDraw = (first) => plotly(model).then((Plotly) => {
    if (!alive) return;
    const t0 = performance.now();
    const traces = (model.get("data") || []).map((t, i) => reuse(prevTraces[i], t));
    const layout = reuse(prevLayout, model.get("plot_layout"));
    const config = reuse(prevConfig, model.get("config"));
    const same = !first && traces.length === prevTraces.length &&
      traces.every((t, i) => t === prevTraces[i]) && layout === prevLayout && config === prevConfig;
    prevTraces = traces; prevLayout = layout; prevConfig = config;
    const fn = first ? Plotly.newPlot : Plotly.react;
    const done = same ? Promise.resolve() :
      fn(div, traces.map((t) => t.obj), layout.obj, config.obj);
    return done.then(() => {
      // timing marks for benchmarks/bench_browser.py: when the redraw started and ended
      div.dataset.drawStart = String(t0);
      div.dataset.drawEnd = String(performance.now());
      div.dataset.revision = String(Number(div.dataset.revision) + 1);
      delete div.dataset.error;
    });
  }).catch((e) => {
    prevTraces = []; prevLayout = null; prevConfig = null; // next draw hands Plotly fresh copies
    div.dataset.error = String(e && e.message ? e.message : e);
    console.error("dpexplore PlotlyWidget:", e);
  });
  let drawing = doDraw(true);
  // Coalesce bursts of changes (a slider drag): at most one pending redraw, reading the newest state.
  let queued = false;
  const redraw = () => {
    div.dataset.changeAt = String(performance.now()); // a change arrived from the kernel
    if (queued) return;
    queued = true;
    drawing = drawing.then(() => { queued = false; return doDraw(false); });
  };
  model.on("change:data", redraw);
  model.on("change:plot_layout", redraw);
  model.on("change:config", redraw);

  let ro;
  if (window.ResizeObserver) {
    ro = new ResizeObserver(() => {
      if (window.Plotly && div.classList.contains("js-plotly-plot") && div.offsetParent !== null) {
        window.Plotly.Plots.resize(div);
      }
    });
    ro.observe(el);
  }
  return () => {
    alive = false;
    model.off("change:data", redraw);
    model.off("change:plot_layout", redraw);
    model.off("change:config", redraw);
    if (ro) ro.disconnect();
    if (window.Plotly) window.Plotly.purge(div);
  };
}

export default { render };
