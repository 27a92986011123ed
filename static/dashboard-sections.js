// The dashboard's sections are <details>: a link to a table or chart inside a closed one (the table of
// contents, a shared URL) opens it first, so that the browser can scroll to what was asked for.
function openTarget() {
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id && document.getElementById(id);
  const section = target && target.closest("details.report-section");
  if (section && !section.open) {
    section.open = true;
    target.scrollIntoView();
  }
}
window.addEventListener("hashchange", openTarget);
document.addEventListener("DOMContentLoaded", openTarget);
