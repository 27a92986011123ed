// The annotation page: keyboard, synchronized scrolling, save status with retries, span marks.
// Everything here is an enhancement: without JavaScript each criterion form posts on its own.
(function () {
  "use strict";

  const pending = new Set(); // forms whose last change is not yet confirmed by the server
  const retries = new Map(); // form -> number of failed attempts
  const timers = new Map(); // form -> its scheduled retry
  const refused = new Set(); // forms the server refused (4xx): the same request would be refused again

  function criteria() {
    return Array.from(document.querySelectorAll("form.criterion"));
  }

  function currentCriterion() {
    const active = document.activeElement;
    return active ? active.closest("form.criterion") : null;
  }

  function focusCriterion(form) {
    if (!form) return;
    form.focus({ preventScroll: true });
    form.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function status(form, text, state) {
    const el = form.querySelector(".save-status");
    if (!el) return;
    el.textContent = text;
    el.className = "save-status " + state;
  }

  // --- keyboard ---------------------------------------------------------------
  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) && target.type !== "radio");
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && typing(event.target)) {
      const form = event.target.closest("form.criterion");
      event.target.blur();
      if (form) form.focus({ preventScroll: true });
      return;
    }
    if (typing(event.target)) return; // never steal keys while the annotator writes
    const list = criteria();
    if (!list.length) return;
    const here = currentCriterion();
    const index = here ? list.indexOf(here) : -1;
    if (event.key === "j" || event.key === "k") {
      const next = event.key === "j" ? Math.min(index + 1, list.length - 1) : Math.max(index - 1, 0);
      focusCriterion(list[index === -1 ? 0 : next]);
      event.preventDefault();
      return;
    }
    const values = { "1": "1", "2": "2", t: "tie" };
    if (values[event.key] && here) {
      const radio = here.querySelector('input[type=radio][value="' + values[event.key] + '"]');
      if (radio) {
        radio.checked = true;
        radio.dispatchEvent(new Event("change", { bubbles: true }));
        event.preventDefault();
      }
    }
  });

  // Clicking anywhere in a criterion makes it the current one for the keys.
  document.addEventListener("click", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (form && !typing(event.target) && event.target.type !== "radio") form.focus({ preventScroll: true });
  });

  // --- saving -------------------------------------------------------------------
  document.addEventListener("change", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (!form) return;
    if (event.target.type === "radio") form.classList.add("answered");
    pending.add(form);
    refused.delete(form);
  });
  document.addEventListener("input", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (form) {
      pending.add(form);
      refused.delete(form);
      status(form, "Unsaved changes…", "pending");
    }
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    const form = event.detail.elt;
    if (form.matches && form.matches("form.criterion")) status(form, "Saving…", "pending");
  });

  // The server's reason for a refusal, as text: its plain-text body, or the text of an HTML error page.
  function reason(xhr) {
    let text = xhr.responseText || "";
    if ((xhr.getResponseHeader("Content-Type") || "").indexOf("html") !== -1) {
      text = new DOMParser().parseFromString(text, "text/html").body.textContent || "";
    }
    text = text.replace(/\s+/g, " ").trim();
    if (text.length > 300) text = text.slice(0, 300) + "…";
    return text || "the server refused it (" + xhr.status + ").";
  }

  document.addEventListener("htmx:afterRequest", function (event) {
    const form = event.detail.elt;
    if (!form.matches || !form.matches("form.criterion")) return;
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    clearTimeout(timers.get(form));
    timers.delete(form);
    if (code >= 400 && code < 500) {
      // A refusal: sending the same text again would be refused again. The text stays in the
      // field (nothing is swapped over it) and the form stays unsaved until the annotator changes it.
      retries.delete(form);
      if (code === 403) {
        // Not refused for good: once logged in again, Submit sends it with the rest.
        status(form, "Not saved: your session ended. Log in again in another tab, then press Save here.", "failed");
        return;
      }
      refused.add(form);
      if (code !== 422) status(form, "Not saved: " + reason(event.detail.xhr), "failed"); // a 422 swaps its own message in
      return;
    }
    if (event.detail.successful) {
      retries.delete(form);
      pending.delete(form);
      return;
    }
    // No connection or a server error (5xx): the same request may well succeed later.
    const attempt = (retries.get(form) || 0) + 1;
    retries.set(form, attempt);
    const delay = Math.min(30, 2 ** attempt);
    status(form, "Not saved (" + (code || "no connection") + "); retrying in " + delay + " s", "failed");
    timers.set(form, setTimeout(function () {
      timers.delete(form);
      if (pending.has(form) && !refused.has(form)) htmx.trigger(form, "save-now");
    }, delay * 1000));
  });

  window.addEventListener("beforeunload", function (event) {
    if (pending.size) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // Changes that may still reach the server: refused ones wait for the annotator instead.
  function unconfirmed() {
    return Array.from(pending).filter(function (f) { return !refused.has(f); });
  }

  // Submit only after every change has reached the server.
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form.id !== "submit-form" || !unconfirmed().length || form.dataset.waited) return;
    event.preventDefault();
    unconfirmed().forEach(function (f) { htmx.trigger(f, "save-now"); });
    const started = Date.now();
    (function wait() {
      if (!unconfirmed().length || Date.now() - started > 8000) {
        form.dataset.waited = "1";
        form.requestSubmit();
      } else {
        setTimeout(wait, 100);
      }
    })();
  });

  // --- synchronized scrolling -------------------------------------------------------
  let syncing = false;
  function syncFrom(source, target) {
    if (syncing) return;
    const box = document.getElementById("sync-scroll");
    if (!box || !box.checked) return;
    syncing = true;
    const range = source.scrollHeight - source.clientHeight;
    const ratio = range > 0 ? source.scrollTop / range : 0;
    target.scrollTop = ratio * (target.scrollHeight - target.clientHeight);
    requestAnimationFrame(function () { syncing = false; });
  }

  // --- span marks ---------------------------------------------------------------
  function offsetsIn(article, range) {
    const before = document.createRange();
    before.selectNodeContents(article);
    before.setEnd(range.startContainer, range.startOffset);
    const start = before.toString().length;
    const quote = range.toString();
    return { start: start, end: start + quote.length, quote: quote };
  }

  function setUpSpans() {
    const toolbar = document.getElementById("span-toolbar");
    const urls = document.getElementById("urls");
    if (!toolbar || !urls) return;
    let selection = null;
    document.addEventListener("mouseup", function (event) {
      if (toolbar.contains(event.target)) return;
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) { toolbar.hidden = true; return; }
      const range = sel.getRangeAt(0);
      const article = range.commonAncestorContainer.nodeType === 1
        ? range.commonAncestorContainer.closest("article.prose")
        : range.commonAncestorContainer.parentElement.closest("article.prose");
      if (!article || !range.toString().trim()) { toolbar.hidden = true; return; }
      selection = Object.assign({ position: article.dataset.position }, offsetsIn(article, range));
      const rect = range.getBoundingClientRect();
      toolbar.style.top = (window.scrollY + rect.bottom + 6) + "px";
      toolbar.style.left = (window.scrollX + rect.left) + "px";
      toolbar.hidden = false;
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
  }

  document.addEventListener("DOMContentLoaded", function () {
    const left = document.getElementById("col-1");
    const right = document.getElementById("col-2");
    if (left && right) {
      left.addEventListener("scroll", function () { syncFrom(left, right); }, { passive: true });
      right.addEventListener("scroll", function () { syncFrom(right, left); }, { passive: true });
    }
    setUpSpans();
  });
})();
