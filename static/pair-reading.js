// Reading the two articles of the pair page by keyboard (issue 37): `[`/`]` pick a side (its column
// takes the focus), Space/Shift+Space page it, `m` brings the part of the other article that
// matches what is on screen into view (the section map), `?` lists every key. The reading position
// of each side is kept per assignment in this browser (localStorage) and restored on reload.
// Saving answers lives in annotate.js; this file only reads and scrolls.
(function () {
  "use strict";

  let side = "1"; // the side the paging keys move: the last picked, focused or scrolled column

  function column(position) {
    return document.getElementById("col-" + position);
  }

  function other(position) {
    return position === "1" ? "2" : "1";
  }

  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT", "BUTTON", "A", "SUMMARY"].includes(target.tagName));
  }

  function pick(position) {
    const col = column(position);
    if (!col) return;
    side = position;
    col.focus({ preventScroll: true });
  }

  function page(position, direction) {
    const col = column(position);
    if (!col) return;
    col.scrollBy({ top: direction * Math.max(40, col.clientHeight * 0.9), behavior: "instant" });
  }

  // Scrolls `el` to the top of its column, below the column's sticky label.
  function bringToTop(col, el) {
    const label = col.querySelector(".column-label");
    const offset = el.getBoundingClientRect().top - col.getBoundingClientRect().top - (label ? label.offsetHeight : 0);
    col.scrollTop += offset;
  }

  // The section of `position` on screen: the last map entry whose start is above the column's upper third.
  function sectionOnScreen(position) {
    const col = column(position);
    const map = document.querySelector('.section-map[data-position="' + position + '"]');
    if (!col || !map) return null;
    const line = col.getBoundingClientRect().top + col.clientHeight / 3;
    let current = null;
    map.querySelectorAll("li[data-anchor]").forEach(function (item) {
      const start = document.getElementById(item.dataset.anchor);
      if (start && start.getBoundingClientRect().top <= line) current = item;
    });
    return current || map.querySelector("li[data-anchor]");
  }

  function say(text) {
    const note = document.getElementById("reading-note");
    if (note) note.textContent = text;
  }

  // `m`: the other article, scrolled to the counterpart of the section on screen on this side.
  function matchOther() {
    const item = sectionOnScreen(side);
    if (!item) return;
    const there = other(side);
    const title = item.querySelector(".map-here").textContent;
    if (!item.dataset.match) {
      say("“" + title + "” in Article " + side + " has no counterpart in Article " + there + ".");
      return;
    }
    const target = document.getElementById(item.dataset.match);
    if (!target) return;
    bringToTop(column(there), target);
    say("Article " + there + " shows the part matching “" + title + "”.");
  }

  function overlay() {
    return document.getElementById("keys-overlay");
  }

  function toggleOverlay(open) {
    const box = overlay();
    if (!box) return;
    box.hidden = !open;
    if (open) box.focus({ preventScroll: true });
  }

  // --- reading position, per assignment and side ------------------------------------------
  function storageKey(position) {
    const box = document.getElementById("articles");
    return box && box.dataset.readingKey ? box.dataset.readingKey + ":" + position : null;
  }

  function remember(position) {
    const key = storageKey(position);
    const col = column(position);
    if (!key || !col) return;
    try {
      localStorage.setItem(key, String(Math.round(col.scrollTop)));
    } catch (error) {
      // private mode or full storage: the position is simply not kept
    }
  }

  function restore(position) {
    const key = storageKey(position);
    const col = column(position);
    if (!key || !col) return;
    let stored = null;
    try {
      stored = localStorage.getItem(key);
    } catch (error) {
      stored = null;
    }
    if (stored !== null && /^\d+$/.test(stored)) col.scrollTop = Number(stored);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const box = overlay();
    if (box && !box.hidden) {
      if (event.key === "Escape" || event.key === "?") {
        toggleOverlay(false);
        event.preventDefault();
      }
      return;
    }
    if (typing(event.target) || (event.target.type === "radio" && event.key === " ")) return;
    if (event.key === "?") {
      toggleOverlay(true);
    } else if (event.key === "[" || event.key === "]") {
      pick(event.key === "[" ? "1" : "2");
    } else if (event.key === " ") {
      page(side, event.shiftKey ? -1 : 1);
    } else if (event.key === "m") {
      matchOther();
    } else if (event.key === "s" && steps(side)) {
      toggleSteps(side);
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && onStep(event.target)) {
      moveStep(event.target, event.key === "ArrowDown" ? 1 : -1);
    } else if ((event.key === "+" || event.key === "=" || event.key === "-") && onStep(event.target) && window.getSelection().isCollapsed) {
      const button = event.target.querySelector(event.key === "-" ? ".vote-down" : ".vote-up");
      if (!button) return;
      button.click(); // the same request as a click: the vote, or taking it back when it is the one given
    } else {
      return;
    }
    event.preventDefault();
  });

  // The agent's steps under an article (campaigns that show them): s opens or closes the list of
  // the side being read and puts the keys on its first step; the arrows go from step to step.
  function steps(position) {
    return document.getElementById("steps-" + position);
  }

  function toggleSteps(position) {
    const list = steps(position);
    list.open = !list.open;
    const first = list.querySelector(".step");
    if (list.open && first) {
      first.focus({ preventScroll: true });
      bringToTop(column(position), first);
    } else {
      column(position).focus({ preventScroll: true });
    }
  }

  function onStep(target) {
    return target.classList && target.classList.contains("step");
  }

  // A vote answers the step anew: the keys stay on it.
  document.addEventListener("htmx:afterSwap", function (event) {
    const step = event.detail && event.detail.elt;
    if (step && step.classList && step.classList.contains("step")) step.focus({ preventScroll: true });
  });

  function moveStep(step, by) {
    const all = Array.from(step.parentElement.querySelectorAll(".step"));
    const next = all[all.indexOf(step) + by];
    if (!next) return;
    next.focus({ preventScroll: true });
    bringToTop(next.closest(".column"), next);
  }

  document.addEventListener("click", function (event) {
    // A match in the map scrolls the other column, not the page, and leaves the address alone.
    const link = event.target.closest && event.target.closest(".section-map a");
    if (link) {
      const target = document.getElementById(link.getAttribute("href").slice(1));
      const col = target && target.closest(".column");
      if (col) {
        event.preventDefault();
        bringToTop(col, target);
      }
      return;
    }
    if (event.target.closest && event.target.closest("#keys-overlay .close")) toggleOverlay(false);
  });

  document.addEventListener("focusin", function (event) {
    const col = event.target.closest && event.target.closest(".articles .column");
    if (col) side = col.id.slice(4);
  });

  document.addEventListener("DOMContentLoaded", function () {
    ["1", "2"].forEach(function (position) {
      const col = column(position);
      if (!col) return;
      restore(position);
      let timer = null;
      col.addEventListener("scroll", function () {
        clearTimeout(timer);
        timer = setTimeout(function () { remember(position); }, 150);
      }, { passive: true });
      col.addEventListener("pointerenter", function () { side = position; });
    });
  });
  window.addEventListener("pagehide", function () { remember("1"); remember("2"); });
})();
