// Times the server writes in UTC, shown in the browser's own time zone.
// The server renders <time datetime="2026-01-31T14:02:11+00:00" data-local="time">14:02:11 UTC</time>
// (or data-local="datetime" for a date and time); without JavaScript that UTC text stays.
(function () {
  "use strict";

  function pad(n) {
    return String(n).padStart(2, "0");
  }

  function localize(root) {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "your time zone";
    const found = Array.from((root || document).querySelectorAll("time[data-local]"));
    if (root && root.matches && root.matches("time[data-local]")) found.push(root);
    found.forEach(function (el) {
      const when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      const clock = pad(when.getHours()) + ":" + pad(when.getMinutes());
      el.textContent = el.dataset.local === "time"
        ? clock + ":" + pad(when.getSeconds())
        : when.getFullYear() + "-" + pad(when.getMonth() + 1) + "-" + pad(when.getDate()) + " " + clock;
      el.title = "Your time (" + zone + ")";
    });
  }

  document.addEventListener("DOMContentLoaded", function () { localize(document); });
  // Fragments htmx swaps in (a save's "Saved 14:02:11"), in the same task as the swap, so that the
  // UTC text never shows.
  document.addEventListener("htmx:afterSwap", function () { localize(document); });
})();
