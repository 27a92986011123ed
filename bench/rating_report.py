"""Time of the calibration report of a 100k-answer rating campaign (issue 25's target: <= 10 s).

    .venv/bin/python bench/rating_report.py [--topics 1000] [--criteria 10] [--rounds 1000]

A labels-only campaign on a scratch SQLite database gets, through `import_labels`, 1-5 ratings
on `--criteria` criteria of 2 systems' articles per topic by 3 annotators and 2 judges (a close
one and a noisy one): 1000 topics x 2 systems x 10 criteria x 5 raters = 100,000 answers. The
import is timed, then `build_report` (the pointwise section with its bootstraps, alt-test and
prediction-powered means), twice: the first run includes numpy's and scipy's warm-up.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import django_on_scratch_database  # noqa: E402

TARGET_SECONDS = 10.0
HUMANS = ("ann_1", "ann_2", "ann_3")
JUDGES = ("close-judge", "noisy-judge")
SYSTEMS = ("gpt-4o", "qwen-72b")
COLUMNS = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system", "winner_system", "rationale",
    "started_at", "saved_at", "response", "system", "answer", "model",
)  # fmt: skip


def labels_write(path: Path, topics: int, criteria: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    n = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for t in range(topics):
            for system in SYSTEMS:
                quality = rng.integers(1, 6, size=criteria)
                for rater in (*HUMANS, *JUDGES):
                    spread = 2 if rater == "noisy-judge" else 1
                    points = np.clip(quality + rng.integers(-spread, spread + 1, size=criteria), 1, 5)
                    kind = "judge" if rater in JUDGES else "human"
                    saved = "" if kind == "judge" else "2024-05-01T10:00:00Z"
                    for c, point in enumerate(points.tolist()):
                        writer.writerow(("bench", f"Topic {t:05d}", f"crit_{c:02d}", kind, rater, "", "", "", "", "", saved,
                                         "rating 1-5", system, point, "m/x" if kind == "judge" else ""))  # fmt: skip
                        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--criteria", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    django_on_scratch_database("rating-report", debug=False)
    from django.core.management import call_command

    from annotate.models import Answer, Campaign
    from calibration.report.build import build_report

    folder = Path(tempfile.mkdtemp(prefix="bench-rating-"))
    rows = labels_write(folder / "answers.csv", args.topics, args.criteria, args.seed)
    call_command("create_campaign", "--name", "bench", "--labels-only", verbosity=0)
    start = time.perf_counter()
    call_command("import_labels", "--campaign", "bench", str(folder / "answers.csv"), verbosity=0, stdout=open("/dev/null", "w"))
    imported = time.perf_counter() - start
    campaign = Campaign.objects.get(name="bench")
    print(f"{rows:,} answer rows ({Answer.objects.count():,} human answers stored), import_labels {imported:.1f} s")
    times = []
    for _ in range(2):
        start = time.perf_counter()
        report = build_report(campaign, rounds=args.rounds, alt_epsilon=0.2, alt_epsilon_reason="bench")
        times.append(time.perf_counter() - start)
    table = report["pointwise"]["tables"][0]
    kappa = table["judges"]["close-judge"]["figures"]["figures"]["kappa_quadratic"]
    print(f"pointwise: {table['n_answers']:,} answers, {table['n_items']:,} items; close judge quadratic kappa {kappa['value']:.3f} "
          f"{kappa['ci']} (n = {kappa['n']:,})")  # fmt: skip
    print(f"report (rounds {args.rounds}): first {times[0]:.2f} s, second {times[1]:.2f} s")
    best = min(times)
    print(f"target <= {TARGET_SECONDS:.0f} s: {best:.2f} s, ratio {best / TARGET_SECONDS:.2f} of the target — "
          f"{'met' if best <= TARGET_SECONDS else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    main()
