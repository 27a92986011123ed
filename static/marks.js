// Marked passages on the annotation page: select text to mark it, see every mark highlighted in
// its article, and remove one from there (or from the list under the criteria).
//
// A mark is stored as character offsets into its article's text (the `textContent` of
// `article.prose`, which annotate.rendering.plain_text computes on the server). Highlighting wraps
// text in <mark> elements and adds no text, so offsets stay the same with or without highlights.
(function () {
  "use strict";

  function articleAt(position) {
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
    document.querySelectorAll("article.prose mark.span-mark").forEach(function (mark) {
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

  function highlight() {
    unhighlight();
    document.querySelectorAll("#spans li[data-span]").forEach(function (item) {
      const article = articleAt(item.dataset.position);
      if (!article) return;
      const good = item.classList.contains("span-up");
      const comment = item.querySelector(".span-comment");
      const label = (good ? "Marked good" : "Marked bad") + (comment ? ": " + comment.textContent : "");
      wrap(article, Number(item.dataset.start), Number(item.dataset.end), function () {
        const mark = document.createElement("mark");
        mark.className = "span-mark " + (good ? "span-up" : "span-down");
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
      const item = document.querySelector('#spans li[data-span="' + mark.dataset.span + '"]');
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

    document.addEventListener("mouseup", function (event) {
      if (toolbar.contains(event.target) || (popover && popover.contains(event.target))) return;
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) { toolbar.hidden = true; return; }
      const range = sel.getRangeAt(0);
      const container = range.commonAncestorContainer;
      const article = (container.nodeType === 1 ? container : container.parentElement).closest("article.prose");
      if (!article || !range.toString().trim()) { toolbar.hidden = true; return; }
      closePopover();
      selection = Object.assign({ position: article.dataset.position }, offsetsIn(article, range));
      toolbar.hidden = false;
      place(toolbar, range.getBoundingClientRect());
    });

    toolbar.addEventListener("click", function (event) {
      const button = event.target.closest("button[data-polarity]");
      if (!button || !selection) return;
      const comment = toolbar.querySelector("input[name=comment]");
      htmx.ajax("POST", urls.dataset.spanAdd, {
        target: "#spans",
        swap: "outerHTML",
        values: Object.assign({ polarity: button.dataset.polarity, comment: comment.value }, selection),
      });
      comment.value = "";
      toolbar.hidden = true;
      window.getSelection().removeAllRanges();
    });

    document.addEventListener("click", function (event) {
      const mark = event.target.closest && event.target.closest("article.prose mark.span-mark");
      if (mark && window.getSelection().isCollapsed) {
        openPopover(mark);
      } else if (popover && !popover.hidden && !popover.contains(event.target)) {
        closePopover();
      }
    });

    document.addEventListener("keydown", function (event) {
      const mark = event.target.closest && event.target.closest("article.prose mark.span-mark");
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

  document.addEventListener("DOMContentLoaded", function () {
    highlight();
    setUp();
  });
  // The list is swapped in after every mark added or removed: highlight what it holds now.
  document.addEventListener("htmx:load", function (event) {
    if (event.detail.elt && event.detail.elt.id === "spans") highlight();
  });
})();
