// dpexplore app shell toolbar (anywidget ESM, dpexplore/ui/shell.py ShellBridge):
//  * sends the page's query string (?eps=0.5&k=1000) to the kernel once (Voila preheats kernels:
//    the kernel cannot read the URL itself);
//  * "Presentation": larger text and lines in every plot of the page (html.dpx-present; the
//    plot widgets listen for the "dpexplore:present" event); present=1 in the URL turns it on;
//  * "Link to this view": the page URL with the current control values (view_query);
//  * "CSV": the plotted data, built by the kernel on request.

const PRESENT = "dpx-present";

function setPresent(on) {
  const root = document.documentElement;
  if (root.classList.contains(PRESENT) === !!on) return;
  root.classList.toggle(PRESENT, !!on);
  window.dispatchEvent(new Event("dpexplore:present"));
}

function pageUrl(query, present) {
  const q = query + (present ? (query ? "&" : "") + "present=1" : "");
  return window.location.origin + window.location.pathname + (q ? "?" + q : "");
}

function render({ model, el }) {
  const row = document.createElement("div");
  row.className = "dpx-toolbar-row";
  const mk = (text, title) => {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = text; b.title = title;
    row.appendChild(b);
    return b;
  };
  const present = mk("Presentation", "Larger text and lines for a projector (present=1 in the URL)");
  const link = mk("Link to this view", "A URL that opens this app with the current settings");
  const csvBtn = mk("CSV", "Download the plotted data as CSV");
  present.classList.add("dpx-present-toggle");
  link.classList.add("dpx-link-button");
  csvBtn.classList.add("dpx-csv-button");
  const box = document.createElement("span");
  box.className = "dpx-link-box"; box.hidden = true;
  const input = document.createElement("input");
  input.className = "dpx-link"; input.readOnly = true; input.setAttribute("aria-label", "Link to this view");
  const copy = document.createElement("button");
  copy.type = "button"; copy.textContent = "Copy";
  box.append(input, copy);
  row.appendChild(box);
  el.appendChild(row);

  const params = new URLSearchParams(window.location.search);
  const p = params.get("present");
  if (p === "1" || p === "true") { model.set("present", true); }
  const q = window.location.search.replace(/^\?/, "");
  if (q && model.get("query") !== q) model.set("query", q);
  model.save_changes();

  const showPresent = () => {
    const on = !!model.get("present");
    present.setAttribute("aria-pressed", on ? "true" : "false");
    setPresent(on);
    if (!box.hidden) input.value = pageUrl(model.get("view_query"), on);
  };
  showPresent();
  present.addEventListener("click", () => { model.set("present", !model.get("present")); model.save_changes(); showPresent(); });
  model.on("change:present", showPresent);

  const showLink = () => { input.value = pageUrl(model.get("view_query"), !!model.get("present")); };
  link.addEventListener("click", () => {
    box.hidden = !box.hidden;
    link.setAttribute("aria-expanded", box.hidden ? "false" : "true");
    if (!box.hidden) { showLink(); input.focus(); input.select(); }
  });
  model.on("change:view_query", () => { if (!box.hidden) showLink(); });
  copy.addEventListener("click", () => {
    showLink(); input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(() => document.execCommand("copy"));
    else document.execCommand("copy");
  });

  const onMsg = (msg, buffers) => {
    if (!msg || msg.type !== "dpexplore:csv") return;
    const buf = buffers && buffers[0];
    const bytes = buf && buf.buffer ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf;
    const url = URL.createObjectURL(new Blob([bytes], { type: "text/csv" }));
    const a = document.createElement("a");
    a.href = url; a.download = msg.name || "dpexplore.csv";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  };
  model.on("msg:custom", onMsg);
  csvBtn.addEventListener("click", () => model.send({ type: "dpexplore:csv" }));
  return () => { model.off("msg:custom", onMsg); model.off("change:present", showPresent); };
}

export default { render };
