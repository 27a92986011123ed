"""Simulated annotators against the production server (`make serve`), on SQLite and on PostgreSQL.

    python bench/load.py [--databases sqlite postgres] [--annotators 30] [--seconds 90] [--ramp 30] [--interval 0.5]

For each database it prepares a fresh one (SQLite: a temporary file;
PostgreSQL: the database `benchload` on 127.0.0.1:5432, dropped and created),
imports the Wiki Live Challenge sample when ../shared/wlc-sample is present
(else the demo), creates the annotators and a campaign with the 39-criterion
rubric, and starts `make serve` on a free port. The simulated annotators
arrive over `--ramp` seconds; each logs in through the login form, claims a pair, saves one criterion (a winner
and a rationale, through the htmx endpoint the page uses) every `--interval`
seconds, submits when all criteria are saved and goes on with the next pair,
until `--seconds` have passed. Then the server is stopped and the database is
read back: every save the server acknowledged must be in the audit trail, and
the stored label must hold the last acknowledged answer; anything else is a
lost save.

Prints requests, errors, lost saves and p50/p95/p99 per kind of request.
Targets (issue 9), 30 annotators on a 2-core machine: 0 errors, 0 lost saves,
save p95 <= 50 ms on both databases.
"""

import argparse
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "wlc-sample"
PYTHON = ROOT / ".venv" / "bin" / "python"
POSTGRES_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/benchload"
SAVE_TARGET_MS = 50
PASSWORD = "load-bench-password"
SECRET = "load-bench-secret-key-" + "x" * 40


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


# --- the database side, run in a child process so that each database gets its own Django -----------


def django_setup() -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def prepare(annotators: int) -> None:
    """Migrates, imports articles, creates the annotators and the campaign; prints what the clients need as JSON."""
    django_setup()
    import io

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from harness import load_sample_or_demo

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        sys.stdout, real = quiet, sys.stdout
        try:
            _, rubric_key = load_sample_or_demo(SAMPLE)
        finally:
            sys.stdout = real
    from annotate.models import CriterionSet, System
    from annotate.services.campaigns import campaign_create

    rubric = CriterionSet.objects.filter(key=rubric_key).order_by("-version").first()
    from django.contrib.auth.hashers import make_password

    hashed = make_password(PASSWORD)  # hashed once: the hasher is slow on purpose
    users = [User.objects.create(username=f"load{i:02d}", password=hashed) for i in range(annotators)]
    systems = list(System.objects.order_by("-is_reference", "key").values_list("key", flat=True))
    campaign = campaign_create(
        name="Load bench", criterion_set=rubric, systems=systems, overlap=min(3, len(users)), annotators=users, rationale_min_length=5
    )
    keys = list(rubric.criteria.order_by("order").values_list("key", flat=True))
    call_command("check", stdout=io.StringIO())
    print(json.dumps({"campaign": campaign.pk, "pairs": campaign.pairs.count(), "criteria": keys, "users": [u.username for u in users]}))


def verify(acks_path: str) -> None:
    """Reads the acknowledged saves back from the database; prints the lost ones as JSON."""
    django_setup()
    from annotate.models import Label, LabelChange

    acks = json.loads(Path(acks_path).read_text())
    audited = set(LabelChange.objects.filter(field="rationale").values_list("assignment_id", "new_value"))
    stored = {(a, k): r for a, k, r in Label.objects.values_list("assignment_id", "criterion__key", "rationale")}
    last: dict[tuple[int, str], str] = {}
    missing_audit = 0
    for assignment_id, key, rationale in acks:
        last[(assignment_id, key)] = rationale
        if (assignment_id, rationale) not in audited:
            missing_audit += 1
    wrong_final = sum(1 for where, rationale in last.items() if stored.get(where) != rationale)
    print(json.dumps({"acknowledged": len(acks), "missing_from_audit": missing_audit, "wrong_final_value": wrong_final}))


def child(mode: str, env: dict, *args: str) -> dict:
    done = subprocess.run([str(PYTHON), __file__, mode, *args], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the clients ---------------------------------------------------------------------------------------


@dataclass
class Tally:
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    acks: list[tuple[int, str, str]] = field(default_factory=list)
    save_finished: list[float] = field(default_factory=list)
    last_login: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, ms: float) -> None:
        with self.lock:
            self.times.setdefault(kind, []).append(ms)
            if kind == "save":
                self.save_finished.append(time.monotonic())

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


class Annotator:
    """One person in a browser: a kept-alive connection, cookies, and the pair in front of them."""

    def __init__(self, base: str, username: str, tally: Tally):
        self.base, self.username, self.tally = base, username, tally
        self.netloc = urllib.parse.urlsplit(base).netloc
        self.cookies: dict[str, str] = {}
        self.connection: http.client.HTTPConnection | None = None

    def csrf(self) -> str:
        return self.cookies.get("csrftoken", "")

    def send(self, method: str, path: str, body: bytes | None, headers: dict) -> tuple[int, str, str]:
        """One request on the kept-alive connection (opened again once if the server closed it)."""
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.netloc, timeout=30)
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                text = response.read().decode("utf-8", "replace")
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
                continue
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    self.cookies[key.strip()] = rest.split(";", 1)[0]
            if response.getheader("Connection", "").lower() == "close":
                self.connection.close()
                self.connection = None
            return response.status, response.getheader("Location", ""), text
        raise AssertionError("unreachable")

    def request(self, kind: str, path: str, data: dict | None = None, htmx: bool = False) -> tuple[int, str, str]:
        """Sends a request, follows redirects as a browser does, and times the whole."""
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        method = "POST" if data is not None else "GET"
        started = time.perf_counter()
        try:
            for _ in range(5):
                headers = {"Referer": self.base + "/", "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
                if method == "POST":
                    headers |= {"X-CSRFToken": self.csrf(), "Content-Type": "application/x-www-form-urlencoded"}
                if htmx:
                    headers["HX-Request"] = "true"
                status, location, text = self.send(method, path, body, headers)
                if status not in (301, 302, 303) or not location:
                    break
                path, method, body = urllib.parse.urljoin(path, location), "GET", None
        except OSError as exc:
            self.tally.error(f"{kind}: {exc}")
            return 0, "", ""
        self.tally.add(kind, (time.perf_counter() - started) * 1000)
        if status >= 400:
            self.tally.error(f"{kind}: HTTP {status} {text[:200]!r}")
        return status, path, text

    def run(self, campaign: int, keys: list[str], interval: float, deadline: float, arrive_after: float) -> None:
        draw = random.Random(self.username)
        time.sleep(arrive_after)
        self.request("login page", "/accounts/login/")
        status, url, _ = self.request(
            "login", "/accounts/login/", {"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.csrf()}
        )
        if status != 200 or "/accounts/login/" in url:
            self.tally.error(f"login of {self.username} failed")
            return
        with self.tally.lock:
            self.tally.last_login = max(self.tally.last_login, time.monotonic())
        status, url, _ = self.request("claim", f"/campaigns/{campaign}/next/", {})
        pairs = 0
        while time.monotonic() < deadline:
            found = re.search(r"/work/(\d+)/", url)
            if status != 200 or not found:
                return
            assignment = int(found.group(1))
            for n, key in enumerate(keys):
                time.sleep(interval * draw.uniform(0.8, 1.2))
                if time.monotonic() >= deadline:
                    return
                rationale = f"{self.username} pair {pairs} criterion {n}: reads well enough"
                status, _, _ = self.request(
                    "save", f"/work/{assignment}/criteria/{key}/", {"position": draw.choice("12"), "rationale": rationale}, htmx=True
                )
                if status == 200:
                    with self.tally.lock:
                        self.tally.acks.append((assignment, key, rationale))
            status, url, _ = self.request("submit (+ next page)", f"/work/{assignment}/submit/", {})
            pairs += 1


# --- the server ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(base: str, server: subprocess.Popen, limit: float = 120) -> None:
    until = time.monotonic() + limit
    while time.monotonic() < until:
        if server.poll() is not None:
            sys.exit(f"the server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(base + "/accounts/login/", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"the server did not answer within {limit:.0f} s")


def stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)


def fresh_database(kind: str, workdir: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{workdir}/load.sqlite3"
    import psycopg

    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS benchload WITH (FORCE)")
        admin.execute("CREATE DATABASE benchload")
    return POSTGRES_URL


def measure(kind: str, args) -> dict:
    workdir = tempfile.mkdtemp(prefix=f"load-{kind}-")
    env = {**os.environ, "DATABASE_URL": fresh_database(kind, workdir), "SECRET_KEY": SECRET, "DEBUG": "0"}
    setup = child("_prepare", env, str(args.annotators))
    port = free_port()
    serve_env = {**env, "HOST": "127.0.0.1", "PORT": str(port)}
    if args.web_workers:
        serve_env["WEB_WORKERS"] = str(args.web_workers)
    if args.web_threads:
        serve_env["WEB_THREADS"] = str(args.web_threads)
    log = open(Path(workdir) / "serve.log", "w")
    server = subprocess.Popen(
        ["make", "--no-print-directory", "serve"], cwd=ROOT, env=serve_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    tally = Tally()
    try:
        wait_until_up(base, server)
        deadline = time.monotonic() + args.seconds
        people = [Annotator(base, name, tally) for name in setup["users"]]
        # People arrive over the ramp, not all in one instant: each login hashes a password on purpose slowly.
        threads = [
            threading.Thread(
                target=p.run, args=(setup["campaign"], setup["criteria"], args.interval, deadline, args.ramp * i / len(people))
            )
            for i, p in enumerate(people)
        ]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
    finally:
        stop(server)
        log.close()
    acks = Path(workdir) / "acks.json"
    acks.write_text(json.dumps(tally.acks))
    checked = child("_verify", env, str(acks))
    return {"kind": kind, "setup": setup, "tally": tally, "checked": checked, "wall": wall, "log": log.name}


def report(result: dict, args) -> bool:
    tally, checked = result["tally"], result["checked"]
    requests = sum(len(v) for v in tally.times.values())
    lost = checked["missing_from_audit"] + checked["wrong_final_value"]
    print(
        f"\n== {result['kind']}: {args.annotators} annotators, {result['wall']:.0f} s, campaign of {result['setup']['pairs']} pairs "
        f"x {len(result['setup']['criteria'])} criteria (server log: {result['log']})"
    )
    print(
        f"requests {requests} ({requests / result['wall']:.1f}/s), errors {len(tally.errors)}, "
        f"saves acknowledged {checked['acknowledged']}, lost saves {lost} "
        f"(missing from the audit trail {checked['missing_from_audit']}, stored value not the last answer {checked['wrong_final_value']})"
    )
    print(f"{'request':<22}{'n':>7}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind, times in tally.times.items():
        print(
            f"{kind:<22}{len(times):>7}{percentile(times, 0.5):>10.1f}{percentile(times, 0.95):>10.1f}"
            f"{percentile(times, 0.99):>10.1f}{max(times):>10.1f}"
        )
    for text in tally.errors[:10]:
        print(f"  error: {text}")
    # Logins hash a password on purpose slowly (about 0.6 s of CPU each here); while the
    # annotators arrive, saves share the two cores with that work.
    saves = tally.times.get("save", [])
    settled = [ms for ms, at in zip(saves, tally.save_finished) if at > tally.last_login]
    print(
        f"{'save, all logged in':<22}{len(settled):>7}{percentile(settled, 0.5):>10.1f}{percentile(settled, 0.95):>10.1f}"
        f"{percentile(settled, 0.99):>10.1f}{max(settled, default=float('nan')):>10.1f}"
    )
    save_p95 = percentile(saves, 0.95)
    print(f"save p95 {save_p95:.1f} ms against a target of {SAVE_TARGET_MS} ms: {save_p95 / SAVE_TARGET_MS:.2f}x of the target")
    return not tally.errors and lost == 0 and save_p95 <= SAVE_TARGET_MS


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_prepare":
        return prepare(int(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "_verify":
        return verify(sys.argv[2])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=90, help="how long the annotators work (bounded)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between one annotator's saves")
    parser.add_argument("--ramp", type=float, default=30, help="seconds over which the annotators arrive and log in")
    parser.add_argument("--web-workers", type=int, default=0, help="gunicorn processes (default: make serve's)")
    parser.add_argument("--web-threads", type=int, default=0, help="threads per gunicorn process (default: make serve's)")
    args = parser.parse_args()
    if not 1 <= args.annotators <= 200 or not 1 <= args.seconds <= 900:
        sys.exit("--annotators must be 1..200 and --seconds 1..900")
    verdicts = [report(measure(kind, args), args) for kind in args.databases]
    print("\nall targets met" if all(verdicts) else "\nsome target missed")


if __name__ == "__main__":
    main()
