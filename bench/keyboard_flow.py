"""A whole pair labelled by keyboard in a real Chromium, counting the control keys per criterion.

Used by bench/annotate.py. The driver behaves as an annotator who knows the keys the page
advertises (its "Keys:" hint) and nothing else:

- to reach the next criterion it presses `n` (next unanswered) when the page offers it, else `j`;
  on a fresh page it first looks whether the cursor already waits on the criterion;
- it presses `1` or `2` to choose;
- it presses Tab until the cursor is in the rationale box (none when the choice put it there);
- it types the rationale (text keys, counted apart) and presses Esc to leave the box.

Control keys are every key that is not text typed into the rationale. The time per criterion is
the wall time from its first key to its last; the whole pair's time runs until the server has
confirmed every save ("39 / 39").

It counts the POSTs that save criteria (issue 37: at most one per criterion when the rationale is
typed in one go), then submits with the page's own key, Ctrl+Enter, and times the submission: the
POSTs sent after the key (none when everything is saved), the server's time for the submit request
(Chromium's requestStart to responseStart) and the wall time until the next page has loaded.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
PASSWORD = "bench-keyboard-password"
ACTIVE_CRITERION = "() => { const f = document.activeElement && document.activeElement.closest('form.criterion'); return f ? f.id : ''; }"
# Every criterion saved and counted: the counter says n / n and no save is pending or failed.
ALL_CONFIRMED = """n => document.getElementById("progress").textContent.trim() === `${n} / ${n}`
    && Array.from(document.querySelectorAll("form.criterion .save-status")).every(s => s.classList.contains("saved"))"""
IN_RATIONALE = "() => document.activeElement && document.activeElement.name === 'rationale'"


@dataclass
class KeyboardRun:
    criteria: int = 0
    control_keys: list[int] = field(default_factory=list)  # per criterion
    keys_by_name: Counter = field(default_factory=Counter)
    text_keys: int = 0
    seconds: list[float] = field(default_factory=list)  # per criterion, first key to last
    whole_pair_seconds: float = 0.0
    confirm_seconds: float = 0.0  # after the last key, until every save was confirmed
    advertised: list[str] = field(default_factory=list)
    saves: int = 0  # POSTs saving a criterion, while labelling
    saves_on_submit: int = 0  # POSTs saving a criterion after the submit key
    submit_server_ms: float = 0.0
    submit_wall_ms: float = 0.0
    match_keys: int = 0  # keys that brought the other article's matching section into view
    match_checked: int = 0  # sections of the first article tried


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root: Path) -> tuple[subprocess.Popen, str]:
    """`manage.py runserver` on the bench's database (the environment names it), on a free port."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(root / "manage.py"), "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=root,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # a loaded machine can take a minute to start Django
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/accounts/login/", timeout=1)
            return server, url
        except OSError:
            time.sleep(0.1)
    server.terminate()
    sys.exit("the bench server did not start")


# Scrolls the first article so that section `id` starts near the top of its column.
SCROLL_TO_SECTION = """id => { const el = document.getElementById(id), col = el.closest('.column');
    col.scrollTop += el.getBoundingClientRect().top - col.getBoundingClientRect().top - 40; }"""
IN_VIEW = """id => { const el = document.getElementById(id), col = el.closest('.column');
    const top = el.getBoundingClientRect().top - col.getBoundingClientRect().top; return top >= 0 && top < col.clientHeight; }"""


def matching_part_keys(page) -> tuple[int, int]:
    """For every section of Article 1 that has a counterpart (the section map says which): scroll to
    it, press `m` once, and check that the counterpart is then in view. Returns (the most keys any
    section needed, sections tried): 1 when `m` alone always did it, 0 when no section matched."""
    rows = page.evaluate(
        "() => Array.from(document.querySelectorAll('.section-map[data-position=\"1\"] li[data-match]')).map(li => [li.dataset.anchor, li.dataset.match])"
    )
    most = 0
    for anchor, match in rows:
        page.evaluate(SCROLL_TO_SECTION, anchor)
        keys = 0
        while keys < 5 and not (keys and page.evaluate(IN_VIEW, match)):
            page.keyboard.press("m")
            keys += 1
        if not page.evaluate(IN_VIEW, match):
            keys = 99  # never came into view
        most = max(most, keys)
    return most, len(rows)


def label_pair_by_keyboard(*, url: str, username: str, assignment_id: int, keys: list[str], seed: int = 0) -> KeyboardRun:
    from playwright.sync_api import sync_playwright

    draw = random.Random(seed)
    run = KeyboardRun(criteria=len(keys))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=url, viewport={"width": 1400, "height": 900})
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(url + "/")
        page.goto(f"/work/{assignment_id}/")
        page.wait_for_load_state("networkidle")
        run.advertised = page.locator(".hint kbd").all_inner_texts()
        posts = [0]
        page.on("request", lambda r: posts.__setitem__(0, posts[0] + 1) if r.method == "POST" and "/criteria/" in r.url else None)
        move = "n" if "n" in run.advertised else "j"

        def press(key: str, counter: list[int]) -> None:
            page.keyboard.press(key)
            counter[0] += 1
            run.keys_by_name[key] += 1

        started = time.perf_counter()
        for i, key in enumerate(keys):
            target = f"c-{key}"
            count = [0]
            begun = time.perf_counter()
            for _ in range(5):
                if page.evaluate(ACTIVE_CRITERION) == target:
                    break
                press(move, count)
            else:
                sys.exit(f"criterion {i + 1}: '{move}' did not reach {target} (cursor on '{page.evaluate(ACTIVE_CRITERION)}')")
            press(draw.choice("12"), count)
            for _ in range(5):
                if page.evaluate(IN_RATIONALE):
                    break
                press("Tab", count)
            else:
                sys.exit(f"criterion {i + 1}: Tab never reached the rationale box")
            rationale = f"Reason {i + 1}: the second paragraph is clearer."
            page.keyboard.type(rationale)
            run.text_keys += len(rationale)
            press("Escape", count)
            run.control_keys.append(count[0])
            run.seconds.append(time.perf_counter() - begun)
        last_key = time.perf_counter()
        page.wait_for_function(ALL_CONFIRMED, arg=len(keys), timeout=60_000)
        done = time.perf_counter()
        run.whole_pair_seconds = done - started
        run.confirm_seconds = done - last_key
        run.saves = posts[0]
        run.match_keys, run.match_checked = matching_part_keys(page)
        before = time.perf_counter()
        with page.expect_response(lambda r: r.url.endswith(f"/work/{assignment_id}/submit/")) as submitted:
            page.keyboard.press("Control+Enter")
        timing = submitted.value.request.timing
        run.submit_server_ms = timing["responseStart"] - timing["requestStart"]
        page.wait_for_load_state("load")
        run.submit_wall_ms = (time.perf_counter() - before) * 1000
        run.saves_on_submit = posts[0] - run.saves
        browser.close()
    return run
