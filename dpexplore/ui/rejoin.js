
// -- when anywidget gave up on the model (rejoin.js, appended to each dpexplore anywidget's ESM) --
// anywidget's front end (0.11: Runtime in its widget.js) gives every model 2 s of wall-clock time,
// from the model's creation, to import its ESM and bind it (AbortSignal.timeout(2000)). When the
// page's main thread is busy longer than that (a Voila page creates all its widget models at once;
// on a loaded server or a slow laptop the imports wait seconds behind that work), the model's
// `ready` promise is rejected for good ("[anywidget] Failed to initialize model." in the console).
// The ESM still loads and the view renders, but AnyModel._handle_comm_msg awaits that promise
// before every message from the kernel: each later update was dropped, and a plot kept its first
// traces while the sliders moved.
//
// dpexploreRejoin(model), called first by render (the ESM is loaded by then, so anywidget's wait
// is over either way), finds the widget manager's model behind the proxy it was given (the one
// holding the very same attribute objects), passes its handler once a message that does nothing
// (an unknown method: ipywidgets ignores it), and only if that is refused with anywidget's
// message: hands the model's comm to the handler of the widget base class (the one anywidget's
// calls once its wait succeeded) and asks the kernel for the whole state again (ipywidgets'
// "request_state"; the answer is an ordinary update), which brings back what was dropped.
// Resolves to true when it rejoined the model, false otherwise (nothing to do, or not possible).
async function dpexploreRejoin(model) {
  try {
    const mgr = model.widget_manager;
    const models = mgr && mgr._models;
    const layout = model.get("layout");
    if (!models || !layout) return false;
    // the first model (of any, some perhaps still being created) holding the proxy's own
    // attribute objects: a Layout may be shared, so every attribute must be the very same
    const ours = (m) => !!m && typeof m.get === "function" && m.get("layout") === layout &&
      Object.keys(m.attributes || {}).every((k) => m.get(k) === model.get(k));
    const all = Object.values(models);
    const real = await new Promise((resolve) => {
      let left = all.length;
      if (!left) resolve(null);
      for (const p of all) {
        Promise.resolve(p).then((m) => { if (ours(m)) resolve(m); }, () => {})
          .finally(() => { if (--left === 0) resolve(null); });
      }
    });
    if (!real || !real.comm || real.__dpexploreRejoin) return false;
    real.__dpexploreRejoin = "checked"; // once per model, not once per view
    try {
      await real._handle_comm_msg({ content: { data: { method: "dpexplore:noop" } }, buffers: [] });
      return false; // anywidget's wait ended in time: nothing to do
    } catch (e) {
      if (!/Failed to initialize model/.test(String(e && e.message))) return false;
    }
    let base = Object.getPrototypeOf(real);
    const own = real._handle_comm_msg;
    while (base && base._handle_comm_msg === own) base = Object.getPrototypeOf(base);
    if (!base || typeof base._handle_comm_msg !== "function") return false;
    real.comm.on_msg((msg) => base._handle_comm_msg.call(real, msg));
    real.comm.send({ method: "request_state" }, {});
    real.__dpexploreRejoin = "rejoined";
    window.__dpexploreRejoined = (window.__dpexploreRejoined || 0) + 1; // tests read it
    console.warn("dpexplore: anywidget gave up waiting for this widget's script (the page was " +
                 "busy); its messages from the kernel are received again and its state was " +
                 "requested anew.");
    return true;
  } catch (e) {
    console.warn("dpexplore: could not check the widget's link to the kernel:", e);
    return false;
  }
}
