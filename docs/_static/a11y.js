// The theme's sidebar opens a section's pages with a <summary> that has no name (axe-core:
// summary-name, WCAG 4.1.2): name it after the section it opens.
document.addEventListener("DOMContentLoaded", () => {
  for (const summary of document.querySelectorAll("nav summary")) {
    if (summary.getAttribute("aria-label")) continue;
    const link = summary.closest("li")?.querySelector(":scope > a");
    const title = link ? link.textContent.trim() : "this section";
    summary.setAttribute("aria-label", `Show or hide the pages under ${title}`);
  }
});
