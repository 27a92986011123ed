// Marked passages on the annotation page: select text to mark it, see every mark highlighted in
// its article, and remove one from there (or from the list under the criteria).
//
// A passage marked while a criterion is active (the criterion last focused) is that criterion's
// evidence: it is listed beside its rationale and highlighted only while the criterion is active.
// By keyboard: `v` selects the first words on screen in the column being read, Shift+arrows grow
// or shrink the selection by a word (→/←) or a sentence (↓/↑), `+` / `-` mark it good / bad.
//
// A mark is stored as character offsets into its article's text (the `textContent` of
// `article.prose`, which annotate.rendering.plain_text computes on the server), or into the text of
// one of the agent's steps shown under it (`.step-body`, with the step's id: campaigns that show
// steps). On a focused step, `v` selects its first words. Highlighting wraps text in <mark>
// elements and adds no text, so offsets stay the same with or without highlights.
(function () {
  "use strict";

  // What a passage can be marked in: an article, or a step's text.
  const MARKABLE = "article.prose, .step-body[data-step-id]";

  function articleAt(position, step) {
    if (step) return document.querySelector('.step-body[data-position="' + position + '"][data-step-id="' + step + '"]');
    return document.querySelector('article.prose[data-position="' + position + '"]');
  }

  // --- selecting a passage ----------------------------------------------------------
  function offsetsIn(article, range) {
    const before = document.createRange();
    before.selectNodeContents(article);
    before.setEnd(range.startContainer, range.startOffset);
    const start = before.toString().length;
    const quote = range.toString();
    return { start: start, end: start + quote.length, quote: quote };
  }

  function place(box, rect) {
    box.style.top = (window.scrollY + rect.bottom + 6) + "px";
    box.style.left = Math.max(4, Math.min(window.scrollX + rect.left, window.scrollX + document.documentElement.clientWidth - box.offsetWidth - 4)) + "px";
  }

  // --- highlights -----------------------------------------------------------------
  function unhighlight() {
    document.querySelectorAll("mark.span-mark").forEach(function (mark) {
      const parent = mark.parentNode;
      while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
      parent.removeChild(mark);
      parent.normalize();
    });
  }

  // Wraps the characters [start, end) of `article`'s text in <mark> elements, one per text node crossed.
  function wrap(article, start, end, make) {
    const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
    const pieces = [];
    let offset = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const length = node.data.length;
      const from = Math.max(start, offset);
      const to = Math.min(end, offset + length);
      // White space between blocks (a text node of its own, as between two paragraphs or table rows)
      // is left unwrapped: a <mark> there would be an element where only rows or blocks belong.
      if (from < to && node.data.trim() !== "") pieces.push([node, from - offset, to - offset]);
      offset += length;
      if (offset >= end) break;
    }
    pieces.forEach(function (piece) {
      let node = piece[0];
      if (piece[2] < node.data.length) node.splitText(piece[2]);
      if (piece[1] > 0) node = node.splitText(piece[1]);
      const mark = make();
      node.parentNode.insertBefore(mark, node);
      mark.appendChild(node);
    });
    return pieces.length;
  }

  // --- the active criterion: the one a passage marked now is evidence for -----------------------
  let active = null; // the form.criterion last focused (the overall question has no evidence)

  function activeKey() {
    return active && active.isConnected ? active.id.slice(2) : "";
  }

  function activate(form) {
    const next = form && form.id.indexOf("c-") === 0 ? form : null;
    if (next === active) return;
    if (active) active.classList.remove("active-criterion");
    active = next;
    if (active) active.classList.add("active-criterion");
    highlight();
  }

  function highlight() {
    unhighlight();
    const key = activeKey();
    document.querySelectorAll("#spans li[data-span], ul.evidence li[data-span]").forEach(function (item) {
      const article = articleAt(item.dataset.position, item.dataset.step);
      if (!article) return;
      // A criterion's evidence is highlighted while its criterion is active, and only then.
      const evidence = item.dataset.criterion || "";
      if (evidence && evidence !== key) return;
      const good = item.classList.contains("span-up");
      const comment = item.querySelector(".span-comment");
      const label = (evidence ? "Evidence, marked " : "Marked ") + (good ? "good" : "bad") + (comment ? ": " + comment.textContent : "");
      wrap(article, Number(item.dataset.start), Number(item.dataset.end), function () {
        const mark = document.createElement("mark");
        mark.className = "span-mark " + (good ? "span-up" : "span-down") + (evidence ? " evidence" : "");
        mark.dataset.span = item.dataset.span;
        mark.title = label + " (click to remove)";
        mark.tabIndex = 0;
        mark.setAttribute("role", "button");
        return mark;
      });
    });
  }

  // --- removing a mark from the article ------------------------------------------------
  function setUp() {
    const toolbar = document.getElementById("span-toolbar");
    const popover = document.getElementById("mark-popover");
    const urls = document.getElementById("urls");
    if (!toolbar || !urls) return;
    let selection = null;
    let chosen = null; // the list item of the mark the popover is about

    function openPopover(mark) {
      const item = document.querySelector('li[data-span="' + mark.dataset.span + '"]');
      if (!item || !popover) return;
      chosen = item;
      popover.querySelector(".mark-popover-text").textContent = mark.title.replace(/ \(click to remove\)$/, "");
      popover.hidden = false;
      place(popover, mark.getBoundingClientRect());
      popover.querySelector("button.mark-remove").focus({ preventScroll: true });
    }

    function closePopover() {
      if (popover) popover.hidden = true;
      chosen = null;
    }

    // The selection, if it lies in one article: remembered, with the toolbar beside it.
    function capture() {
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) { toolbar.hidden = true; selection = null; return false; }
      const range = sel.getRangeAt(0);
      const container = range.commonAncestorContainer;
      const article = (container.nodeType === 1 ? container : container.parentElement).closest(MARKABLE);
      if (!article || !range.toString().trim()) { toolbar.hidden = true; selection = null; return false; }
      closePopover();
      selection = Object.assign({ position: article.dataset.position, step: article.dataset.stepId || "" }, offsetsIn(article, range));
      const caption = toolbar.querySelector(".evidence-for");
      if (caption) {
        caption.hidden = !active;
        if (active) {
          const title = active.querySelector(".criterion-title") || active.querySelector(".criterion-text");
          caption.querySelector("strong").textContent = title ? title.textContent.trim().slice(0, 60) : activeKey();
        }
      }
      toolbar.hidden = false;
      place(toolbar, range.getBoundingClientRect());
      return true;
    }

    function mark(polarity) {
      if (!selection) return;
      const comment = toolbar.querySelector("input[name=comment]");
      htmx.ajax("POST", urls.dataset.spanAdd, {
        target: "#spans",
        swap: "outerHTML",
        values: Object.assign({ polarity: polarity, comment: comment.value, criterion: activeKey() }, selection),
      });
      comment.value = "";
      toolbar.hidden = true;
      selection = null;
      window.getSelection().removeAllRanges();
    }

    document.addEventListener("mouseup", function (event) {
      if (toolbar.contains(event.target) || (popover && popover.contains(event.target))) return;
      capture();
    });

    toolbar.addEventListener("click", function (event) {
      const button = event.target.closest("button[data-polarity]");
      if (button) mark(button.dataset.polarity);
    });

    // --- selecting by keyboard ----------------------------------------------------------
    let reading = "1"; // the column the keys select in: the last focused or pointed at

    // `v`: the first word of the first text on screen in the column being read, or of the focused step.
    function selectOnScreen(target) {
      const col = document.getElementById("col-" + reading);
      const step = target && target.classList && target.classList.contains("step") ? target.querySelector(".step-body[data-step-id]") : null;
      const article = step || articleAt(reading);
      if (!col || !article) return false;
      const label = col.querySelector(".column-label");
      const top = step ? -Infinity : col.getBoundingClientRect().top + (label ? label.offsetHeight : 0);
      const bottom = step ? Infinity : col.getBoundingClientRect().bottom;
      const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const word = /\S+/.exec(node.data);
        if (!word) continue;
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const rect = range.getBoundingClientRect();
        if (rect.height && rect.top >= top && rect.bottom <= bottom) {
          const sel = window.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
          return capture();
        }
      }
      return false;
    }

    const steps = { ArrowRight: ["forward", "word"], ArrowLeft: ["backward", "word"], ArrowDown: ["forward", "sentence"], ArrowUp: ["backward", "sentence"] };

    function typing(target) {
      return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    }

    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      const overlay = document.getElementById("keys-overlay");
      if (overlay && !overlay.hidden) return;
      if (event.key === "v" && !event.shiftKey) {
        if (selectOnScreen(event.target)) event.preventDefault();
      } else if (event.shiftKey && steps[event.key] && selection) {
        window.getSelection().modify("extend", steps[event.key][0], steps[event.key][1]);
        capture();
        event.preventDefault();
      } else if ((event.key === "+" || event.key === "=" || event.key === "-") && selection) {
        mark(event.key === "-" ? "-1" : "1");
        event.preventDefault();
        event.stopImmediatePropagation(); // the selection is gone now: + and - must not also vote the step it was in
      }
    });

    document.addEventListener("focusin", function (event) {
      if (!event.target.closest) return;
      const col = event.target.closest(".articles .column");
      if (col) reading = col.id.slice(4);
    });
    document.querySelectorAll(".articles .column").forEach(function (col) {
      col.addEventListener("pointerenter", function () { reading = col.id.slice(4); });
    });

    document.addEventListener("click", function (event) {
      const mark = event.target.closest && event.target.closest("mark.span-mark");
      if (mark && window.getSelection().isCollapsed) {
        openPopover(mark);
      } else if (popover && !popover.hidden && !popover.contains(event.target)) {
        closePopover();
      }
    });

    document.addEventListener("keydown", function (event) {
      const mark = event.target.closest && event.target.closest("mark.span-mark");
      if (mark && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        openPopover(mark);
      } else if (event.key === "Escape" && popover && !popover.hidden) {
        closePopover();
      }
    });

    if (popover) {
      popover.querySelector("button.mark-remove").addEventListener("click", function () {
        if (!chosen) return;
        htmx.ajax("POST", chosen.dataset.delete, { target: "#spans", swap: "outerHTML" });
        closePopover();
      });
    }
  }

  // Registered at once: annotate.js puts the cursor in a criterion as the page loads.
  document.addEventListener("focusin", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (form) activate(form);
  });

  document.addEventListener("DOMContentLoaded", function () {
    const form = document.activeElement && document.activeElement.closest && document.activeElement.closest("form.criterion");
    if (form) activate(form);
    else highlight();
    setUp();
  });
  // The list is swapped in after every mark added or removed: highlight what it holds now.
  // Evidence lists come back out of band with it; a criterion's evidence may complete it.
  document.addEventListener("htmx:load", function (event) {
    const elt = event.detail.elt;
    if (elt && (elt.id === "spans" || (elt.matches && elt.matches("ul.evidence")))) {
      highlight();
      document.dispatchEvent(new CustomEvent("evidence:changed"));
    } else if (elt && elt.classList && elt.classList.contains("step")) {
      highlight(); // a vote draws its step anew, without the marks in its text
    }
  });
})();
