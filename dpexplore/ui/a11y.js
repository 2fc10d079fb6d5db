// dpexplore accessibility, page level (WCAG 2.1 AA): appended to the app shell's toolbar widget
// (ShellBar, dpexplore/ui/shell.py), which calls dpexploreA11y(el) once it is rendered. What it
// does to the app's page (the element .dpexplore-app holding the toolbar):
//  * every slider handle (ipywidgets 8 draws noUiSlider handles: role="slider" with no name)
//    is named by its control's label (aria-labelledby), and announces the number the student sees
//    (aria-valuetext = the readout); a log slider's aria-valuenow/min/max are the values, not the
//    exponents noUiSlider holds (10^-2 … 10^1, not -2 … 1);
//  * a disabled slider (ipywidgets sets "disabled" on its noUiSlider, e.g. the composition
//    explorer's "δ per step" while "δ = 0" is ticked) leaves the Tab order and says so
//    (aria-disabled), as a disabled button or text box does: its keys did nothing;
//  * the buttons of a choice (ipywidgets' ToggleButtons: the profile-GDP app's "view", a tab's plot
//    chooser in presentation mode) say which one is chosen (aria-pressed; it was only drawn darker);
//  * the Theory / Reproduce headers (ipywidgets' Accordion: clickable divs) are buttons that Enter
//    and Space open, with aria-expanded;
//  * a "Skip to plots" link, first in the Tab order, moves the focus to the plots;
//  * the readouts are announced politely (a live region) once they stop changing for LIVE_QUIET_MS,
//    not at every step of a slider being moved.
// The CSS half (focus ring, contrast, the hidden-text class) is A11Y_CSS in dpexplore/ui/a11y.py.

const LIVE_QUIET_MS = 1200;   // a readout is announced this long after the last change
const LIVE_MAX_CHARS = 600;   // what one announcement reads at most

function dpexploreA11y(el) {
  const start = (n) => {
    const app = el.closest(".dpexplore-app");
    if (!app) { if (n < 300) setTimeout(() => start(n + 1), 100); return; }
    if (app.dataset.dpexploreA11y) return;
    app.dataset.dpexploreA11y = "1";
    a11ySkipLink(app);
    const fixAll = () => {
      app.querySelectorAll(".widget-slider .noUi-handle").forEach(a11ySlider);
      app.querySelectorAll(".jupyter-widget-Collapse-header").forEach(a11yCollapse);
      app.querySelectorAll(".widget-toggle-button").forEach(a11yToggle);
      a11yScrollables(app);
    };
    fixAll();
    let pending = false;
    let scrollTimer = null;
    // Plotly redraws (thousands of SVG nodes per slider step) are skipped at once, and a readout
    // whose text changed (every step) is only re-measured once the step is over: the cost of this
    // observer stays out of a step's redraw (a fixAll in the step's frames cost ~6 ms a step)
    const SVG = "http://www.w3.org/2000/svg";
    const WIDGETS = ".widget-slider, .jupyter-widget-Collapse-header, .widget-toggle-button";
    const bringsWidgets = (nodes) => [...nodes].some((n) => n.nodeType === 1 &&
      (n.matches(WIDGETS) || n.querySelector(WIDGETS)));
    new MutationObserver((records) => {
      for (const r of records) {
        const t = r.target;
        if (t.namespaceURI === SVG) continue;
        if (r.type === "attributes") {
          // noUiSlider rewrote a handle's aria values (every slider update): ours again
          if (t.classList.contains("noUi-handle")) a11yValue(t);
          // a slider was disabled or enabled (ipywidgets: the "disabled" attribute of its target)
          else if (r.attributeName === "disabled" && t.classList.contains("noUi-target")) {
            t.querySelectorAll(".noUi-handle").forEach(a11yDisabled);
          }
          // a choice's button chosen or left (ipywidgets: its class mod-active)
          else if (r.attributeName === "class" && t.classList.contains("widget-toggle-button")) a11yToggle(t);
        } else if (r.addedNodes.length && !(t.closest && t.closest(".dpexplore-plot"))) {
          if (!pending && bringsWidgets(r.addedNodes)) {
            pending = true;   // new widgets (a control shown, a slider rebuilt): once a frame
            requestAnimationFrame(() => { pending = false; fixAll(); });
          } else if (!pending) {
            // new text (a readout, a section's contents): may now be wider than its box
            clearTimeout(scrollTimer);
            scrollTimer = setTimeout(() => a11yScrollables(app), 300);
          }
        }
      }
    }).observe(app, { childList: true, subtree: true, attributes: true,
                      attributeFilter: ["aria-valuenow", "aria-valuetext", "aria-valuemin", "aria-valuemax", "disabled",
                                        "class"] });
    a11yLiveReadouts(app, el);
    if (window.ResizeObserver) new ResizeObserver(() => a11yScrollables(app)).observe(app);
  };
  start(0);
}

let a11yIds = 0;
function a11yId(node, prefix) {
  if (!node.id) node.id = prefix + "-" + (++a11yIds) + "-" + Math.random().toString(36).slice(2, 7);
  return node.id;
}

function a11ySkipLink(app) {
  const main = app.querySelector(".dpexplore-main");
  if (!main || app.querySelector(":scope > .dpexplore-skip")) return;
  a11yId(main, "dpexplore-plots");
  main.tabIndex = -1;
  main.setAttribute("role", "region");
  main.setAttribute("aria-label", "Plots");
  const a = document.createElement("a");
  a.className = "dpexplore-skip";
  a.href = "#" + main.id;
  a.textContent = "Skip to plots";
  a.addEventListener("click", (e) => {
    e.preventDefault();
    main.focus({ preventScroll: true });
    main.scrollIntoView({ block: "start" });
  });
  app.insertBefore(a, app.firstChild);
}

function a11ySlider(h) {
  const s = h.closest(".widget-slider");
  if (!s) return;
  const label = s.querySelector(".widget-label");
  if (label && label.textContent.trim()) {
    const id = a11yId(label, "dpexplore-label");
    if (h.getAttribute("aria-labelledby") !== id) h.setAttribute("aria-labelledby", id);
    const readout = s.querySelector(".widget-readout");
    // the editable readout (type a value, Enter): a text box named after the control
    if (readout && !readout.hasAttribute("aria-label")) {
      readout.setAttribute("role", "textbox");
      readout.setAttribute("aria-label", label.textContent.trim() + ", type a value");
    }
  } else if (!h.hasAttribute("aria-label")) {
    h.setAttribute("aria-label", "slider");
  }
  a11yValue(h);
  a11yDisabled(h);
}

// a button of a choice (ToggleButtons) pressed when it is the chosen one
function a11yToggle(b) {
  const on = b.classList.contains("mod-active") ? "true" : "false";
  if (b.getAttribute("aria-pressed") !== on) b.setAttribute("aria-pressed", on);
}

// a handle of a disabled slider: out of the Tab order and announced as disabled (noUiSlider keeps
// its tabindex 0 and ignores its keys); back in when the slider is enabled again
function a11yDisabled(h) {
  const target = h.closest(".noUi-target");
  const off = !!target && target.hasAttribute("disabled");
  if (off) {
    if (h.getAttribute("tabindex") !== "-1") h.setAttribute("tabindex", "-1");
    if (h.getAttribute("aria-disabled") !== "true") h.setAttribute("aria-disabled", "true");
  } else {
    if (h.getAttribute("tabindex") === "-1") h.setAttribute("tabindex", "0");
    if (h.hasAttribute("aria-disabled")) h.removeAttribute("aria-disabled");
  }
}

// a number as the readout shows it ("2,500", "1e-05", "0.500") → a number
function a11yNumber(text) {
  const v = Number(String(text).replace(/[,\u202f\u00a0 _]/g, ""));
  return Number.isFinite(v) ? v : null;
}

// the value as a plain decimal of at most 12 significant digits (ARIA's numbers have no exponent:
// 0.000001 and 0.01, not 1e-6 and 0.010000000000000002)
function a11yShort(v) {
  const s = String(Number(v.toPrecision(12)));
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[2] + (m[3] || ""), e = Number(m[4]);
  return e < 0 ? m[1] + "0." + "0".repeat(-e - 1) + digits
               : m[1] + digits + "0".repeat(Math.max(0, e - digits.length + 1));
}

function a11yValue(h) {
  const s = h.closest(".widget-slider");
  if (!s) return;
  const mine = h._dpexploreAria || {};
  const set = (k, v) => {
    if (v === null || v === undefined) return;
    v = String(v);
    mine[k] = v;
    if (h.getAttribute(k) !== v) h.setAttribute(k, v);
  };
  // an attribute differing from what was last set here is noUiSlider's own (the exponent of a log
  // slider): remember it as the raw position
  const raw = h._dpexploreRaw || (h._dpexploreRaw = {});
  for (const k of ["aria-valuenow", "aria-valuemin", "aria-valuemax"]) {
    const a = h.getAttribute(k);
    if (a !== null && a !== mine[k]) raw[k] = Number(a);
  }
  h._dpexploreAria = mine;
  const readout = s.querySelector(".widget-readout");
  const shown = readout ? readout.textContent.trim() : "";
  const m = /dpexplore-log-base-([0-9.]+)/.exec(s.className);
  if (m) {
    const base = Number(m[1]);
    const now = a11yNumber(shown);
    if (Number.isFinite(raw["aria-valuemin"])) set("aria-valuemin", a11yShort(base ** raw["aria-valuemin"]));
    if (Number.isFinite(raw["aria-valuemax"])) set("aria-valuemax", a11yShort(base ** raw["aria-valuemax"]));
    if (now !== null) set("aria-valuenow", a11yShort(now));
    else if (Number.isFinite(raw["aria-valuenow"])) set("aria-valuenow", a11yShort(base ** raw["aria-valuenow"]));
  } else {
    // a linear slider: noUiSlider writes its value rounded to one decimal (the demo's μ at 1.05
    // said 1.0, and 1.25 said 1.3): the number shown instead, when the readout is one number
    const now = a11yNumber(shown);
    if (now !== null) set("aria-valuenow", a11yShort(now));
  }
  if (shown) set("aria-valuetext", shown);
}

// a readout wider than the panel, or an open Theory section holding a wide formula or table on a
// narrow screen, scrolls: it must then take the keyboard focus (the arrow keys scroll it), with a name
function a11yScrollables(app) {
  const mark = (r, name) => {
    const scrolls = r.scrollWidth > r.clientWidth + 1 || r.scrollHeight > r.clientHeight + 1;
    if (scrolls && r.getAttribute("tabindex") !== "0") {
      r.tabIndex = 0;
      r.setAttribute("role", "region");
      r.setAttribute("aria-label", name);
      r.dataset.dpexploreScrolls = "1";
    } else if (!scrolls && r.dataset.dpexploreScrolls) {
      r.removeAttribute("tabindex");
      r.removeAttribute("role");
      r.removeAttribute("aria-label");
      delete r.dataset.dpexploreScrolls;
    }
  };
  app.querySelectorAll(".dpexplore-readouts .widget-html-content").forEach((r) => mark(r, "Readout (scrolls)"));
  // on a narrow screen any text or table wider than the window scrolls sideways (the reflow rule)
  app.querySelectorAll(".widget-html-content, .widget-htmlmath-content").forEach((r) => {
    if (!r.closest(".dpexplore-readouts")) mark(r, "Text (scrolls)");
  });
  app.querySelectorAll(".jupyter-widget-Collapse-contents").forEach((r) => {
    const head = r.parentElement && r.parentElement.querySelector(":scope > .jupyter-widget-Collapse-header");
    mark(r, ((head && head.textContent.trim()) || "Section") + " (scrolls)");
  });
}

function a11yCollapse(head) {
  const box = head.closest(".jupyter-widget-Collapse");
  if (!box) return;
  const contents = box.querySelector(":scope > .jupyter-widget-Collapse-contents");
  const sync = () => {
    const open = !!contents && !contents.classList.contains("lm-mod-hidden") &&
      !contents.classList.contains("p-mod-hidden");
    head.setAttribute("aria-expanded", open ? "true" : "false");
  };
  if (!head.dataset.dpexploreA11y) {
    head.dataset.dpexploreA11y = "1";
    head.setAttribute("role", "button");
    head.tabIndex = 0;
    if (contents) head.setAttribute("aria-controls", a11yId(contents, "dpexplore-section"));
    const icon = head.querySelector("i");
    if (icon) icon.setAttribute("aria-hidden", "true");
    head.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); head.click(); }
    });
    head.addEventListener("click", () => setTimeout(() => {
      sync();
      const app = head.closest(".dpexplore-app");
      if (app) a11yScrollables(app);
    }, 0));
  }
  sync();
}

// The readouts, read out once they have been still for LIVE_QUIET_MS (a slider dragged or held
// down changes them many times a second: one announcement of the final values, not a flood).
function a11yLiveReadouts(app, el) {
  const box = app.querySelector(".dpexplore-readouts");
  if (!box) return;
  const live = document.createElement("div");
  live.className = "dpexplore-sr-only dpexplore-live";
  live.setAttribute("role", "status");   // polite, read as a whole
  live.setAttribute("aria-live", "polite");
  el.appendChild(live);
  let timer = null;
  const norm = () => (box.innerText || "").replace(/\s+/g, " ").trim();
  let last = norm();
  new MutationObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const text = norm();
      if (!text || text === last) return;
      last = text;
      live.textContent = text.length > LIVE_MAX_CHARS ? text.slice(0, LIVE_MAX_CHARS) + "…" : text;
      a11yScrollables(app);
    }, LIVE_QUIET_MS);
  }).observe(box, { childList: true, subtree: true, characterData: true });
}
