// The annotation page: keyboard, save status with retries, flushing on leave, synchronized scrolling.
// Everything here is an enhancement: without JavaScript each criterion form posts on its own.
// Marked passages live in marks.js.
(function () {
  "use strict";

  const retries = new Map(); // form -> number of failed attempts
  const timers = new Map(); // form -> its scheduled retry
  const flushed = new Map(); // form -> the body last sent by flush(), so that leaving sends each change once
  const denied = new Set(); // forms last answered 403: the server will not take them from this page as it is
  const loggedOut = new Set(); // forms whose save was answered with the login page: the session ended

  function criteria() {
    return Array.from(document.querySelectorAll("form.criterion"));
  }

  function currentCriterion() {
    const active = document.activeElement;
    return active && active.closest ? active.closest("form.criterion") : null;
  }

  function panel() {
    return document.getElementById("panel");
  }

  // The answer given in a criterion: its checked choice, or a count typed in its box (one article alone).
  function answer(form) {
    const choice = form.querySelector("input[type=radio]:checked") || form.querySelector("input[name=value]:not([type=radio])");
    return choice && choice.value.trim() ? choice : null;
  }

  // --- what counts as done: the rule of annotate/answers.py, applied to what is typed ---------------
  function complete(form) {
    const choice = answer(form);
    if (!choice) return false;
    const box = panel();
    if (choice.value === "tie" && box && box.dataset.allowTie === "0") return false;
    const rationale = form.querySelector("textarea[name=rationale]");
    const min = box ? Number(box.dataset.minLength || 0) : 0;
    if (rationale && rationale.value.trim().length < min) return false;
    if (choice.value === "cannot_judge") return true; // no winner: no evidence is asked for
    // Evidence the campaign asks for: a passage marked for this criterion (marks.js lists it in the form).
    const evidence = box ? box.dataset.evidence : "";
    if (evidence === "every" || (evidence === "winners" && choice.value !== "tie")) {
      return Boolean(form.querySelector("ul.evidence li[data-span]"));
    }
    return true;
  }

  // Scrolls the criteria panel (never the whole page) so that `form` shows, below the sticky heading.
  function reveal(form, block) {
    const box = panel();
    if (!box) return;
    if (box.scrollHeight > box.clientHeight + 1 && getComputedStyle(box).overflowY !== "visible") {
      const top = form.getBoundingClientRect().top - box.getBoundingClientRect().top;
      const room = box.clientHeight - form.offsetHeight;
      if (block === "center") {
        box.scrollTop += top - Math.max(48, room / 2);
      } else if (top < 48) {
        box.scrollTop += top - 48;
      } else if (top > room) {
        box.scrollTop += top - room;
      }
    } else {
      form.scrollIntoView({ block: block === "center" ? "center" : "nearest" });
    }
  }

  // A criterion in a collapsed category opens its category before it takes the cursor.
  function unfold(form) {
    const group = form.closest("details");
    if (group && !group.open) group.open = true;
  }

  function focusCriterion(form, block) {
    if (!form) return;
    unfold(form);
    form.focus({ preventScroll: true });
    reveal(form, block);
  }

  // Puts the cursor where the criterion needs it: its rationale once a winner is chosen, else the criterion.
  function land(form, block) {
    if (!form) return;
    unfold(form);
    const rationale = form.querySelector("textarea[name=rationale]");
    if (rationale && answer(form)) {
      rationale.focus({ preventScroll: true });
      rationale.setSelectionRange(rationale.value.length, rationale.value.length);
      reveal(form, block);
    } else {
      focusCriterion(form, block);
    }
  }

  // The first criterion after `here` (wrapping round) that is not done; past the last, the Submit button.
  function nextOpen(here) {
    const list = criteria();
    const start = here ? list.indexOf(here) : -1;
    for (let step = 1; step <= list.length; step += 1) {
      const form = list[(start + step) % list.length];
      if (form !== here && !complete(form)) return form;
    }
    return null;
  }

  function status(form, text, state) {
    const el = form.querySelector(".save-status");
    if (!el) return;
    el.textContent = text;
    el.className = "save-status " + state;
  }

  function markState(form, state) {
    form.classList.toggle("complete", state === "complete");
    form.classList.toggle("partial", state === "partial");
    // Its chip in the overview of done criteria follows.
    const chip = document.querySelector('.overview a[data-jump="' + form.id + '"]');
    if (chip) {
      chip.classList.toggle("complete", state === "complete");
      chip.classList.toggle("partial", state === "partial");
    }
  }

  // --- keyboard ---------------------------------------------------------------
  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) && target.type !== "radio" && target.type !== "checkbox");
  }

  // Shift+1 / Shift+2 / Shift+T: mark or unmark a verdict also acceptable (campaigns that ask for
  // sets). Read by the key's place (event.code): Shift+1 types "!" on most layouts.
  function toggleAlso(form, event) {
    const value = { Digit1: "1", Digit2: "2", KeyT: "tie" }[event.code];
    const box = value && form.querySelector('input[type=checkbox][name=acceptable][value="' + value + '"]');
    if (!box) return false;
    byKey = form;
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    event.preventDefault();
    return true;
  }

  function toRationale(form) {
    const rationale = form.querySelector("textarea[name=rationale]");
    if (rationale) {
      rationale.focus({ preventScroll: true });
      rationale.setSelectionRange(rationale.value.length, rationale.value.length);
    }
  }

  // The single-article page (README "Annotating one article"): the choice a key gives in a
  // criterion, by its protocol. A yes/no question: y, n, and a for N/A where the criterion allows it.
  // A scale: the digit of its point; 0 is 10 on a scale that reaches 10 without 0.
  function readingChoice(form, key) {
    const protocol = form.dataset.protocol;
    // A nominal criterion: 1-9 choose its first nine classes, in the rubric's order.
    if (protocol === "nominal") return /^[1-9]$/.test(key) ? form.querySelectorAll("input[type=radio]")[Number(key) - 1] || null : null;
    const value = protocol === "checklist" ? { y: "yes", n: "no", a: "na" }[key] : protocol === "rating" && /^[0-9]$/.test(key) ? key : null;
    if (!value) return null;
    return form.querySelector('input[type=radio][value="' + value + '"]') ||
      (value === "0" ? form.querySelector('input[type=radio][value="10"]') : null);
  }

  function choose(form, radio, event) {
    byKey = form;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    event.preventDefault();
    // Straight on to the why: the choice is saved, the cursor waits in the rationale.
    toRationale(form);
  }

  // Every criterion is answered: Submit is shown and named, never focused (a Space would press it).
  function allDone() {
    const submit = document.querySelector("#submit-form button[type=submit]");
    if (!submit) return;
    submit.scrollIntoView({ block: "nearest" });
    const note = document.getElementById("submit-note");
    if (note) note.hidden = false;
  }

  // Submit has its own key, Ctrl+Enter (or a click): never a moved focus and a Space.
  function submitKey(event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return false;
    const form = document.getElementById("submit-form");
    if (!form) return false;
    event.preventDefault();
    form.requestSubmit();
    return true;
  }

  // A focused Submit button ignores Space: prose typed outside a text box must never press it.
  function spaceOnSubmit(event) {
    if (event.key !== " " || !event.target.closest || !event.target.closest("#submit-form")) return false;
    event.preventDefault();
    return true;
  }
  document.addEventListener("keyup", spaceOnSubmit);

  document.addEventListener("keydown", function (event) {
    if (submitKey(event) || spaceOnSubmit(event)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    // A count: digits go to its box; Enter saves it (leaving the box is its change) and goes on to the rationale.
    if (event.key === "Enter" && event.target.matches && event.target.matches("form.criterion input[name=value]")) {
      event.preventDefault();
      toRationale(event.target.closest("form.criterion"));
      return;
    }
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
    // On the single-article page n answers No: "next unanswered" is the pair page's alone. Past the
    // last open criterion it stays put and says how to submit: a key press never reaches Submit.
    if (event.key === "n" && !(panel() && panel().dataset.keys === "reading")) {
      const open = nextOpen(here);
      if (open) land(open, "center");
      else allDone();
      event.preventDefault();
      return;
    }
    if (here && here.dataset.protocol) {
      // A count or a ranking is typed: its first digit goes to its box, the rest is typed there.
      const typed = here.dataset.protocol === "count" || here.dataset.protocol === "ranking";
      const box = typed ? here.querySelector("input[name=value]:not([type=radio])") : null;
      if (box && /^[0-9]$/.test(event.key)) {
        box.value = event.key;
        box.dispatchEvent(new Event("input", { bubbles: true }));
        box.focus({ preventScroll: true });
        event.preventDefault();
        return;
      }
      const radio = readingChoice(here, event.key);
      if (radio) choose(here, radio, event);
      return;
    }
    if (event.shiftKey && here && toggleAlso(here, event)) return;
    // b: the overall question's "Both bad"; c: "Cannot judge", where the campaign allows it.
    const values = { "1": "1", "2": "2", t: "tie", b: "both_bad", c: "cannot_judge" };
    if (values[event.key] && here) {
      const radio = here.querySelector('input[type=radio][value="' + values[event.key] + '"]');
      if (radio) choose(here, radio, event);
    }
  });

  // Clicking anywhere in a criterion makes it the current one for the keys.
  document.addEventListener("click", function (event) {
    const jump = event.target.closest && event.target.closest("a[data-jump]");
    if (jump) {
      const target = document.getElementById(jump.dataset.jump);
      if (target) {
        event.preventDefault();
        land(target, "center");
      }
      return;
    }
    const form = event.target.closest && event.target.closest("form.criterion");
    if (form && !typing(event.target) && event.target.type !== "radio") form.focus({ preventScroll: true });
  });

  // --- saving -------------------------------------------------------------------
  // One request per answer: a change waits for a pause of PAUSE_MS (a choice made by key puts the
  // cursor in the rationale, so the choice and the reason typed after it travel together), and
  // leaving the rationale sends at once. A form is saved only when its fields differ from what the
  // server last acknowledged and from what is on its way: the server is never asked twice for the
  // same answer, and Submit sends only what is not acknowledged yet.
  const PAUSE_MS = 800;
  const KEY_CHOICE_MS = 3000; // a choice made by key waits this long for the rationale typed after it
  const acked = new Map(); // form -> the body the server last confirmed (or the page was rendered with)
  const inflight = new Map(); // form -> the body of its request on its way
  const refusedBody = new Map(); // form -> the body the server refused (4xx): sending it again is pointless
  const pauses = new Map(); // form -> its scheduled save after a pause
  let byKey = null; // the form whose choice a key is making (choose(), just before its change event)

  function body(form) {
    const data = new FormData(form);
    data.delete("csrfmiddlewaretoken");
    data.delete("flush");
    return new URLSearchParams(data).toString();
  }

  function dirty(form) {
    return body(form) !== acked.get(form);
  }

  // Saves `form` now unless the server has, or is being sent, exactly these fields.
  function save(form) {
    clearTimeout(pauses.get(form));
    pauses.delete(form);
    const now = body(form);
    if (now === acked.get(form) || now === inflight.get(form) || now === refusedBody.get(form)) return;
    htmx.trigger(form, "save-now");
  }

  function later(form, wait) {
    clearTimeout(pauses.get(form));
    pauses.set(form, setTimeout(function () { save(form); }, wait || PAUSE_MS));
  }

  function changed(form) {
    refusedBody.delete(form);
    if (dirty(form)) status(form, "Unsaved changes…", "pending");
    // Typed back to what the server has: nothing to send, and nothing unsaved.
    else if (!inflight.has(form) && acked.has(form)) {
      const stored = acked.get(form).split("&").some(function (field) { return field && !field.endsWith("="); });
      status(form, stored ? "Saved" : "", stored ? "saved" : "");
    }
  }

  document.addEventListener("change", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (!form) return;
    changed(form);
    // A choice made by key puts the cursor in the rationale: it waits for the reason typed next and
    // travels with it. A click (the annotator may stop there) or a question without a rationale
    // (the overall one) is sent at once.
    const keyed = byKey === form;
    byKey = null;
    if (keyed && form.querySelector("textarea[name=rationale]")) later(form, KEY_CHOICE_MS);
    else if (event.target.matches("textarea")) later(form);
    else save(form);
  });
  document.addEventListener("input", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (!form) return;
    changed(form);
    later(form);
  });
  // Leaving the rationale (Esc, Tab, a click elsewhere) ends the answer: send it now.
  document.addEventListener("focusout", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion");
    if (form && event.target.matches("textarea, input[name=value]")) save(form);
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    const form = event.detail.elt;
    if (!form.matches || !form.matches("form.criterion")) return;
    inflight.set(form, body(form));
    status(form, "Saving…", "pending");
  });

  // A session that ended answers a save with a redirect to the login page, which the browser follows:
  // that page must not be swapped in as if it were the save's status.
  document.addEventListener("htmx:beforeSwap", function (event) {
    const form = event.target.closest && event.target.closest("form.criterion"); // the event comes from the swap's target
    if (!form) return;
    const box = panel();
    const url = event.detail.xhr && event.detail.xhr.responseURL;
    if (box && box.dataset.login && url && new URL(url).pathname === box.dataset.login) {
      event.detail.shouldSwap = false;
      loggedOut.add(form);
    }
  });

  // The server's reason for a refusal, as text: its plain-text body, or the message of an HTML error page.
  function reason(xhr) {
    let text = xhr.responseText || "";
    if ((xhr.getResponseHeader("Content-Type") || "").indexOf("html") !== -1) {
      const doc = new DOMParser().parseFromString(text, "text/html");
      const message = doc.querySelector("main p") || doc.querySelector("main") || doc.body;
      text = message ? message.textContent || "" : "";
    }
    text = text.replace(/\s+/g, " ").trim();
    if (text.length > 300) text = text.slice(0, 300) + "…";
    return text || "the server refused it (" + xhr.status + ").";
  }

  document.addEventListener("htmx:afterRequest", function (event) {
    const form = event.detail.elt;
    if (!form.matches || !form.matches("form.criterion")) return;
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    const sent = inflight.get(form);
    inflight.delete(form);
    clearTimeout(timers.get(form));
    timers.delete(form);
    if (code >= 400 && code < 500) {
      // A refusal: sending the same text again would be refused again. The text stays in the
      // field (nothing is swapped over it) and the form stays unsaved until the annotator changes it.
      retries.delete(form);
      if (code === 403) {
        denied.add(form);
        // The server says why (removed from the campaign, a session that ended). Not refused for
        // good: after logging in again, Submit sends it with the rest.
        status(form, "Not saved: " + reason(event.detail.xhr), "failed");
        return;
      }
      refusedBody.set(form, sent);
      if (code !== 422) status(form, "Not saved: " + reason(event.detail.xhr), "failed"); // a 422 swaps its own message in
      return;
    }
    if (loggedOut.delete(form)) {
      retries.delete(form);
      denied.add(form);
      status(form, "Not saved: you are logged out. Log in again in another tab, then press Submit here: it sends this change with the rest.", "failed");
      return;
    }
    if (event.detail.successful) {
      retries.delete(form);
      denied.delete(form);
      acked.set(form, sent);
      const saved = form.querySelector(".save-status");
      if (saved && saved.dataset.state !== undefined) markState(form, saved.dataset.state);
      // Changes made while the request was on its way are still to be saved: their own save follows.
      if (dirty(form) && !pauses.has(form)) later(form);
      return;
    }
    // No reply, or a server error (5xx): the change may or may not have been stored (a reply can be
    // lost after the commit). Sending the same answer again is safe: the server keeps the stored
    // value and says "Saved", so the retry settles which it was.
    const attempt = (retries.get(form) || 0) + 1;
    retries.set(form, attempt);
    const delay = Math.min(30, 2 ** (attempt - 1));
    status(form, "Not confirmed (" + (code || "no connection") + "); trying again in " + delay + " s", "failed");
    timers.set(form, setTimeout(function () {
      timers.delete(form);
      save(form);
    }, delay * 1000));
  });

  // Changes the server has not acknowledged and may still take: refused ones wait for the annotator.
  function unconfirmed() {
    return criteria().filter(function (f) {
      return acked.has(f) && dirty(f) && body(f) !== refusedBody.get(f);
    });
  }

  function unsaved() {
    return criteria().filter(function (f) { return acked.has(f) && dirty(f); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.criterion").forEach(function (form) { acked.set(form, body(form)); });
  });

  // A passage marked or removed as a criterion's evidence may complete it, or undo that.
  document.addEventListener("evidence:changed", function () {
    criteria().forEach(function (form) {
      if (!form.querySelector("ul.evidence")) return;
      markState(form, complete(form) ? "complete" : answer(form) ? "partial" : "");
    });
  });

  // --- leaving the page --------------------------------------------------------------
  // A change made less than the save delay before the page is hidden or left would be lost with
  // it: send it now, as a beacon (or a keepalive fetch) that outlives the page. `flush=1` asks the
  // server for a bare 204; the CSRF token travels in the form's own field. Returns whether every
  // unconfirmed change is on its way.
  function flush() {
    let all = true;
    unconfirmed().forEach(function (form) {
      const key = body(form);
      // One on its way is sent again: leaving may cancel it, and the server takes a repeat as "Saved".
      if (flushed.get(form) === key) return;
      const data = new FormData(form);
      data.set("flush", "1");
      const url = form.getAttribute("hx-post") || form.action;
      let queued = false;
      try {
        queued = navigator.sendBeacon(url, data);
      } catch (error) {
        queued = false;
      }
      if (!queued && window.fetch) {
        fetch(url, { method: "POST", body: data, keepalive: true, credentials: "same-origin" }).catch(function () {});
        queued = true;
      }
      if (queued) flushed.set(form, key);
      all = all && queued;
    });
    return all;
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") flush();
  });
  window.addEventListener("pagehide", flush);

  window.addEventListener("beforeunload", function (event) {
    if (event.defaultPrevented || submitting) return;
    const waiting = unsaved();
    if (!waiting.length) return;
    // What can be sent is sent; ask only when something may really be lost: refused changes,
    // saves that are failing already, or no network.
    const sent = flush();
    const failing = waiting.some(function (f) { return retries.has(f) || refusedBody.get(f) === body(f) || denied.has(f); });
    if (!sent || failing || !navigator.onLine) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // Submit: what is saved is not sent again. With everything acknowledged it goes at once; else
  // only the unacknowledged answers are sent (or awaited, when on their way) first.
  let submitting = false;
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form.id !== "submit-form") return;
    if (!unconfirmed().length || form.dataset.waited) {
      submitting = true;
      return;
    }
    event.preventDefault();
    unconfirmed().forEach(save);
    const started = Date.now();
    (function wait() {
      if (!unconfirmed().length || Date.now() - started > 8000) {
        form.dataset.waited = "1";
        form.requestSubmit();
      } else {
        setTimeout(wait, 50);
      }
    })();
  });

  // --- the rationale box grows with its text (where CSS field-sizing cannot do it) -----------------
  function grow(textarea) {
    textarea.style.height = "auto";
    textarea.style.height = textarea.scrollHeight + 2 + "px";
  }

  if (!(window.CSS && CSS.supports && CSS.supports("field-sizing", "content"))) {
    document.addEventListener("input", function (event) {
      if (event.target.matches && event.target.matches("form.criterion textarea")) grow(event.target);
    });
    document.addEventListener("DOMContentLoaded", function () {
      document.querySelectorAll("form.criterion textarea").forEach(grow);
    });
  }

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

  document.addEventListener("DOMContentLoaded", function () {
    const left = document.getElementById("col-1");
    const right = document.getElementById("col-2");
    if (left && right) {
      left.addEventListener("scroll", function () { syncFrom(left, right); }, { passive: true });
      right.addEventListener("scroll", function () { syncFrom(right, left); }, { passive: true });
    }
    // Open where the work is: the criterion named in the address (a save without JavaScript comes
    // back to it), else the first one not done yet.
    const box = panel();
    const named = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (named && named.matches("form.criterion")) {
      land(named, "center");
    } else if (box && box.dataset.firstOpen) {
      land(document.getElementById(box.dataset.firstOpen), "center");
    }
  });
})();
