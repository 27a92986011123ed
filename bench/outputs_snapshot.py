"""What the platform writes, kept to compare two versions of the code: a refactoring must not change it.

    .venv/bin/python bench/outputs_snapshot.py DIR            # write the outputs of this checkout into DIR
    .venv/bin/python bench/outputs_snapshot.py --compare A B  # the differences between two such folders

Three campaigns, built from nothing by this checkout's own commands and services:

* the demo (`load_demo`), labelled by its two annotators through the labelling
  services (every criterion and the overall question, submitted; three pairs each),
  with the three offline baseline judges run on it (`run_judges`);
* a one-article campaign on the demo's articles (the checklist rubric of
  `fixtures/checklist_report_presentation.json`: readings, no pairs), answered through the reading
  services by the same two annotators (four readings each, every question);
* the realistic benchmark of `bench/calibration_realistic.py` (860 pairs, 100,620
  human labels, 3 judges), imported with `import_labels`.

For each: the JSON report (`calibration_report --rounds 200`) and the files of
`export_labels` (labels, overall answers, spans, calls). Whatever the platform
draws at random (the campaign's pair order, each claim's left/right order) is
drawn from a seeded generator here, through a `sitecustomize` module put first on
the path of every process, so that two checkouts draw the same. `--compare`
ignores only the times the report and the exports stamp (generated_at, times of
day), and prints every other difference.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = "200"

# Put first on sys.path of every process: the platform's draws become a seeded sequence.
SITECUSTOMIZE = """
import random, secrets
_draws = random.Random(20261124)
random.SystemRandom = lambda *args: random.Random(_draws.random())
secrets.randbelow = lambda n: _draws.randrange(n)
"""

DEMO_SCRIPT = """
import io, django
django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from django.utils import timezone
from datetime import datetime, UTC, timedelta
from annotate.models import Campaign
from annotate.services.claims import assignment_claim_next, assignment_open
from annotate.services.labelling import assignment_submit
from annotate.services.answers import label_save, overall_save

call_command("load_demo", stdout=io.StringIO())
campaign = Campaign.objects.get(name="Demo campaign")
criteria = list(campaign.criterion_set.criteria.order_by("order"))
clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
for round_ in range(3):
    for name in ("annotator1", "annotator2"):
        user = get_user_model().objects.get(username=name)
        work = assignment_claim_next(campaign=campaign, user=user, now=clock)
        if work is None:
            continue
        assignment_open(assignment=work, now=clock)
        for i, criterion in enumerate(criteria):
            clock += timedelta(seconds=7)
            choice = "12"[(work.pair_id * 7 + i * 3 + len(name) + round_) % 2]
            label_save(assignment=work, criterion=criterion, user=user, position=choice,
                       rationale=f"Reason {i} of {name} on pair {work.pair_id}.", now=clock)
        overall_save(assignment=work, user=user, value="1" if work.pair_id % 3 else "2", now=clock)
        assignment_submit(assignment=work, user=user, now=clock)
for kind in ("length", "words-to-watch", "random"):
    call_command("add_judge", f"baseline-{kind}", "--kind", kind, stdout=io.StringIO())
    call_command("run_judges", "--campaign", "Demo campaign", "--judge", f"baseline-{kind}", stdout=io.StringIO(), stderr=io.StringIO())

# A one-article campaign on the demo's articles (the checklist rubric: readings, no pairs), answered
# through the reading services by the same two annotators.
from annotate.services.labelling import assignment_submit
from annotate.services.answers import value_save
call_command("import_criteria", "fixtures/checklist_report_presentation.json", stdout=io.StringIO())
call_command("create_campaign", "--name", "Snapshot checklist", "--criteria", "checklist_report_presentation",
             "--systems", "wikipedia,atlas_agent,quill_researcher", "--benchmark", "demo", "--overlap", "2",
             "--annotators", "annotator1,annotator2", stdout=io.StringIO())
checklist = Campaign.objects.get(name="Snapshot checklist")
questions = list(checklist.criterion_set.criteria.order_by("order"))
# A reading by its rank in the campaign, not its id: ids depend on what else the item table holds.
number = {pk: n for n, pk in enumerate(checklist.readings.order_by("pk").values_list("pk", flat=True), start=1)}
for round_ in range(4):
    for name in ("annotator1", "annotator2"):
        user = get_user_model().objects.get(username=name)
        work = assignment_claim_next(campaign=checklist, user=user, now=clock)
        if work is None:
            continue
        for i, criterion in enumerate(questions):
            clock += timedelta(seconds=5)
            value_save(assignment=work, criterion=criterion, user=user, value="yes" if (number[work.pair_id] * 5 + i + round_) % 3 else "no",
                        rationale=f"Question {i} checked by {name} on reading {number[work.pair_id]}.", now=clock)
        assignment_submit(assignment=work, user=user, now=clock)
"""


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> None:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def environment(work: Path, database: Path) -> dict[str, str]:
    (work / "site").mkdir(exist_ok=True)
    (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY")}
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([str(work / "site"), str(ROOT)]),
        "DATABASE_URL": f"sqlite:///{database}",
        "SECRET_KEY": "snapshot-only-not-secret",
        "DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "OPENBLAS_NUM_THREADS": "1",
    }


def outputs(campaign: str, env: dict[str, str], out: Path, stem: str) -> None:
    python = sys.executable
    run(
        [python, "manage.py", "calibration_report", "--campaign", campaign, "--rounds", ROUNDS, "--out", str(out / f"{stem}-report.json")],
        env,
    )
    run([python, "manage.py", "export_labels", "--campaign", campaign, "--out", str(out / f"{stem}-labels.csv")], env)


def snapshot(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="snapshot-"))
    try:
        env = environment(work, work / "demo.sqlite3")
        run([sys.executable, "manage.py", "migrate", "--noinput"], env)
        run([sys.executable, "-c", DEMO_SCRIPT], env)
        outputs("Demo campaign", env, out, "demo")
        outputs("Snapshot checklist", env, out, "checklist")
        print(f"demo and its one-article checklist campaign: report and exports in {out}")
        realistic = work / "realistic"
        env = environment(work, realistic / "bench.sqlite3")
        run([sys.executable, "bench/calibration_realistic.py", "--keep", str(realistic), "--runs", "1", "--rounds", "0"], env)
        env["DATABASE_URL"] = f"sqlite:///{realistic / 'bench.sqlite3'}"
        outputs("realistic-bench", env, out, "realistic")
        print(f"realistic: report and exports in {out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")


def comparable(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        report = json.loads(text)
        report.pop("generated_at", None)
        text = json.dumps(report, indent=1, sort_keys=True)
    return TIMES.sub("<time>", text).splitlines()


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differing = 0
    for name in names:
        if not (a / name).exists() or not (b / name).exists():
            print(f"{name}: only in {a if (a / name).exists() else b}")
            differing += 1
            continue
        diff = list(difflib.unified_diff(comparable(a / name), comparable(b / name), f"{a}/{name}", f"{b}/{name}", lineterm="", n=1))
        if diff:
            differing += 1
            print("\n".join(diff[:60]) + (f"\n... {len(diff) - 60} more lines" if len(diff) > 60 else ""))
        else:
            print(f"{name}: identical (apart from times)")
    print(f"{len(names) - differing} of {len(names)} files identical")
    return 1 if differing else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.out is None:
        parser.error("give a folder to write into, or --compare A B")
    snapshot(args.out.resolve())


if __name__ == "__main__":
    main()
