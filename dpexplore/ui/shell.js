function render({ model, el }) {
  dpexploreRejoin(model); // rejoin.js: messages from the kernel, if anywidget gave up on the model
  const bar = document.createElement("div");
  bar.className = "dpexplore-bar";
  bar.style.cssText = "display:flex;flex-wrap:wrap;gap:6px;align-items:center;justify-content:flex-end";
  const btn = (label, title) => {
    const b = document.createElement("button");
    b.className = "jupyter-button dpexplore-bar-button"; b.textContent = label; b.title = title;
    b.style.cssText = "height:30px;padding:0 10px;cursor:pointer";
    bar.appendChild(b); return b;
  };
  const present = btn("", "Larger text and lines for a projector (or add present=1 to the page URL)");
  const showPresent = () => {
    present.textContent = model.get("present") ? "Presentation mode: on" : "Presentation mode";
    present.setAttribute("aria-pressed", model.get("present") ? "true" : "false");
  };
  showPresent();
  present.onclick = () => { model.set("present", !model.get("present")); model.save_changes(); };
  model.on("change:present", showPresent);
  const link = btn("Link to this view", "The page URL with every control's current value");
  const box = document.createElement("input");
  box.className = "dpexplore-link"; box.readOnly = true;
  // the box takes the focus with the link selected: a screen reader names it (it had no name)
  box.setAttribute("aria-label", "Link to this view (selected, copy it)");
  box.style.cssText = "display:none;width:min(60vw,520px);height:26px;font-size:13px";
  link.onclick = () => {
    const q = new URLSearchParams(model.get("state") || {});
    if (model.get("present")) q.set("present", "1");
    const url = location.origin + location.pathname + (q.toString() ? "?" + q.toString() : "");
    box.value = url; box.style.display = ""; box.select();
    if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
  };
  const csv = btn("Data (CSV)", "Download the plotted data as CSV");
  csv.onclick = () => model.send({ type: "csv" });
  model.on("msg:custom", (msg) => {
    if (!msg || msg.type !== "csv") return;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([msg.text], { type: "text/csv" }));
    a.download = msg.name; document.body.appendChild(a); a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  });
  bar.appendChild(box);
  el.appendChild(bar);
  dpexploreA11y(el);   // slider names, skip link, live readouts (a11y.js)
  // Typed values: a slider's readout or a number box sends what was typed to the kernel, which
  // reads it as a person means it (ipywidgets read "20,500" as 20, "5e2" as 5 in an integer
  // field, and dropped characters such as "x" from number boxes as they were typed).
  // (number boxes become text inputs on focus: a type="number" input blocks or drops what the
  // browser does not take for a number, so the kernel would never see it to say so)
  const editable = (t) => t && t.closest && t.closest(".dpexplore-app") &&
    ((t.matches("[contenteditable=true]") && t.closest(".widget-slider")) ||
     (t.matches("input") && (t.type === "number" || t.dataset.dpexploreNumber === "1")));
  // The view of a control rewrites its text whenever its model changes (ipywidgets sets the
  // readout's textContent, a number box's value), also while a person is typing into it: the
  // kernel's answer to the previous edit, arriving late on a busy server, replaced "1.00e-" with
  // "1.00e-15" and put the caret first, so the "6" typed next made "61.00e-15" (6.1e-14 was set,
  // not 1e-6). While a control has focus, its view's writes go through `guard`: during an edit
  // the text typed so far stays and the new value is only remembered (it is what the control
  // shows after Enter, when the kernel has not changed it); before any edit the new text is
  // shown with the selection kept (a select-all stays one, so what is typed next replaces it).
  const NATIVE = {
    textContent: Object.getOwnPropertyDescriptor(Node.prototype, "textContent"),
    value: Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value"),
  };
  const prop = (t) => (t.matches("input") ? "value" : "textContent");
  const textOf = (t) => NATIVE[prop(t)].get.call(t) || "";
  const setText = (t, v) => NATIVE[prop(t)].set.call(t, v);
  const allSelected = (t) => {
    const text = textOf(t);
    if (!text) return false;
    if (t.matches("input")) return t.selectionStart === 0 && t.selectionEnd === text.length;
    const sel = window.getSelection();
    return !!sel && sel.rangeCount > 0 && t.contains(sel.anchorNode) && t.contains(sel.focusNode) &&
      sel.toString() === text;
  };
  const placeCaret = (t, all) => {
    if (t.matches("input")) {
      if (all) t.select(); else t.setSelectionRange(t.value.length, t.value.length);
      return;
    }
    const sel = window.getSelection();
    if (!sel) return;
    if (all) { sel.selectAllChildren(t); return; }
    const r = document.createRange(); r.selectNodeContents(t); r.collapse(false);
    sel.removeAllRanges(); sel.addRange(r);
  };
  const guard = (t) => {
    if (t.dataset.dpexploreGuard) return;
    t.dataset.dpexploreGuard = "1";
    const d = NATIVE[prop(t)];
    Object.defineProperty(t, prop(t), {
      configurable: true,
      get() { return d.get.call(this); },
      set(v) {
        if (document.activeElement !== this) { d.set.call(this, v); return; }
        this.dataset.dpexploreBefore = String(v);   // what the control holds now
        if (this.dataset.dpexploreEditing === "1") return;
        const all = allSelected(this);
        d.set.call(this, v);
        placeCaret(this, all);
      },
    });
  };
  const commit = (t) => {
    const raw = textOf(t), before = t.dataset.dpexploreBefore;
    if (before === undefined || raw.trim() === before.trim()) return false;
    const wrap = t.closest(".widget-slider, .widget-text, .widget-inline-hbox");
    const label = wrap && wrap.querySelector(".widget-label");
    setText(t, before);   // the kernel sets the new value (the view then shows it)
    model.send({ type: "typed", label: label ? label.textContent : "", text: raw.slice(0, 200),
                 length: raw.length });
    return true;
  };
  const hook = () => {
    const app = el.closest(".dpexplore-app");
    if (!app) { if (hook.n++ < 300) setTimeout(hook, 100); return; }
    if (app.dataset.dpexploreTyped) return;
    app.dataset.dpexploreTyped = "1";
    // number boxes are text inputs from the moment they are drawn (changing the type on focus
    // moved the caret to the start and lost a select-all, so "7" typed over "0" became "70")
    const textify = (root) => {
      for (const t of root.querySelectorAll('input[type="number"]')) {
        t.dataset.dpexploreNumber = "1"; t.type = "text"; t.inputMode = "decimal";
      }
    };
    textify(app);
    // (a plot's redraw adds thousands of SVG nodes a step: those records are passed over)
    new MutationObserver((records) => {
      if (records.some((r) => r.addedNodes.length && r.target.namespaceURI !== "http://www.w3.org/2000/svg" &&
                              !(r.target.closest && r.target.closest(".dpexplore-plot")))) textify(app);
    }).observe(app, { childList: true, subtree: true });
    // what the control showed before this edit (after an Enter the kernel may have changed it);
    // a paste or an input method changes the text without a keydown, hence beforeinput
    const remember = (t) => { if (t.dataset.dpexploreBefore === undefined) t.dataset.dpexploreBefore = textOf(t); };
    const done = (t) => { delete t.dataset.dpexploreBefore; delete t.dataset.dpexploreEditing; };
    app.addEventListener("focusin", (e) => {
      const t = e.target;
      if (!editable(t)) return;
      if (t.matches("input") && t.type === "number") textify(app);
      guard(t);
      t.dataset.dpexploreBefore = textOf(t);
    }, true);
    app.addEventListener("beforeinput", (e) => {
      if (!editable(e.target)) return;
      remember(e.target);
      e.target.dataset.dpexploreEditing = "1";
    }, true);
    app.addEventListener("keydown", (e) => {
      if (!editable(e.target)) return;
      remember(e.target);
      if (e.key === "Enter") {
        e.preventDefault(); e.stopPropagation();
        commit(e.target);
        done(e.target);
      } else if (e.target.matches("input")) {
        e.stopPropagation();   // ipywidgets' number box filters keys as they are typed
      }
    }, true);
    for (const type of ["keypress", "keyup", "input", "change"]) {
      app.addEventListener(type, (e) => { if (editable(e.target) && e.target.matches("input")) e.stopPropagation(); }, true);
    }
    app.addEventListener("blur", (e) => {
      if (!editable(e.target)) return;
      commit(e.target);
      e.stopPropagation();
      done(e.target);
    }, true);
  };
  hook.n = 0;
  hook();
  // The page's query string, sent until the kernel acknowledges it: with a preheated kernel
  // (Voila's pool) the widgets render before the kernel connection is live, and a message sent
  // then is lost.
  const q = (location.search || "").slice(0, __MAX_QUERY__);
  if (q.length > 1) {
    let acked = false;
    model.on("msg:custom", (msg) => { if (msg && msg.type === "query-ack") acked = true; });
    const send = (n) => {
      if (acked || n > 40) return;
      try { model.send({ type: "query", query: q }); } catch (e) { /* not connected yet */ }
      setTimeout(() => send(n + 1), 500);
    };
    send(0);
  }
}
export default { render };
