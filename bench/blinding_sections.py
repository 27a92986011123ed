"""What the report's blinding section (issue 34) adds at 100,000 labels: its time beside the whole report's.

    .venv/bin/python bench/blinding_sections.py [--labels 100000] [--judges 65] [--rounds 1000] [--judge-guesses 5] [--keep DIR | --reuse DIR]

The data of bench/calibration_scale.py (a labels-only campaign of arena-style battles, humans and
`--judges` judges), imported with the real commands into an SQLite file; then, in this process, the
campaign gets a reference system (the first system in name order) and every human assignment an
answer to the guess question (seeded: 40% right, 20% wrong, 25% don't know, 15% unanswered), and
the first `--judge-guesses` judges (5 by default) their own answers (`run_judges --guess`'s units, one
per pair and order of their verdicts; seeded: a third each first, second, unknown).

Printed: the section's seconds (the indices, the verdicts by guess, the style-controlled fits), of
them the judges' guesses' part, and the whole `build_report`'s, and their ratio. The articles have no texts (labels only), so the style
covariates are all 0 and the fits' cost is that of the model alone, not of measuring articles.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from calibration_scale import CAMPAIGN, MANIFEST, build, django_env  # noqa: E402  (bench/ is on sys.path)


def answer_everything(seed: int) -> int:
    from annotate.models import Assignment, Campaign, System

    campaign = Campaign.objects.get(name=CAMPAIGN)
    campaign.reference_system = System.objects.order_by("key").first()
    campaign.guess_question = True
    campaign.save(update_fields=["reference_system", "guess_question"])
    rng = np.random.default_rng(seed)
    work = list(Assignment.objects.filter(pair__campaign=campaign).only("pk", "guess"))
    for assignment, u in zip(work, rng.random(len(work)), strict=True):
        assignment.guess = "a" if u < 0.3 else "b" if u < 0.6 else "unknown" if u < 0.85 else ""
    Assignment.objects.bulk_update(work, ["guess"], batch_size=2000)
    return len(work)


def judges_guess(count: int, seed: int) -> int:
    """Guess units, done, for the first `count` judges (by name): one per pair and order of their verdicts."""
    from judges.models import Judge, JudgeUnit

    rng = np.random.default_rng(seed + 1)
    judges = list(Judge.objects.order_by("name")[:count])
    made = []
    for judge in judges:
        shown = sorted(set(JudgeUnit.objects.filter(judge=judge, question="verdicts").values_list("pair_id", "a_first")))
        for (pair_id, a_first), u in zip(shown, rng.random(len(shown)), strict=True):
            made.append(JudgeUnit(judge=judge, pair_id=pair_id, a_first=a_first, order="ab" if a_first else "ba", question="guess", status="done",
                                  guess="a" if u < 1 / 3 else "b" if u < 2 / 3 else "unknown"))  # fmt: skip
    JudgeUnit.objects.bulk_create(made, batch_size=2000, ignore_conflicts=True)
    return len(made)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--judges", type=int, default=65)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge-guesses", type=int, default=5, help="judges given answers of their own to the guess question")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, help="build the data in DIR and keep it")
    where.add_argument("--reuse", type=Path, help="use the data built in DIR by --keep")
    args = parser.parse_args(argv)
    folder = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="blinding-bench-"))
    try:
        if args.reuse is None:
            folder.mkdir(parents=True, exist_ok=True)
            build(folder, args.labels, args.judges, args.seed)
        elif not (folder / MANIFEST).is_file():
            sys.exit(f"{folder}: no data built there (run with --keep {folder} first)")
        os.environ.update(django_env(folder))
        import django

        django.setup()
        from annotate.models import Campaign
        from calibration import selectors
        from calibration.report import blinding as report_blinding
        from calibration.report.build import build_report

        answered = answer_everything(args.seed)
        guesses = judges_guess(args.judge_guesses, args.seed)
        campaign = Campaign.objects.get(name=CAMPAIGN)
        inputs = selectors.calibration_inputs(campaign=campaign)
        t = time.perf_counter()
        section = report_blinding.section(campaign, inputs.table, rounds=args.rounds, seed=0)
        alone = time.perf_counter() - t
        t = time.perf_counter()
        report_blinding.section_judges(campaign, inputs.table, rounds=args.rounds, seed=0)
        judges_part = time.perf_counter() - t
        t = time.perf_counter()
        build_report(campaign, rounds=args.rounds)
        whole = time.perf_counter() - t
        overall = section["overall"]
        print(
            f"{len(inputs.table):,} labels, {answered:,} assignments answered or not, {overall['n_pairs']:,} pairs with an answer; "
            f"{len(section['style']['fits'])} raters fitted with style; {guesses:,} judges' guesses of {len(section['judges'])} judges"
        )
        print(f"of the section, the judges' guesses (their indices and verdicts by their own guess): {judges_part:.2f} s")
        print(f"blinding section: {alone:.2f} s; the whole report (section included): {whole:.2f} s; "
              f"the section is {alone / whole:.0%} of it ({args.rounds} rounds)")  # fmt: skip
    finally:
        if args.keep is None and args.reuse is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
