"""Size of the calibration report's Markdown and HTML on a big labels-only campaign, and its build time.

    python bench/report_size.py [--judges 65] [--pairs 420] [--criteria 2] [--systems 20] [--rounds 200] [--seed 0]

Seeded synthetic data, built in memory (no database): an arena-like campaign
without a reference, `--pairs` pairs of `--systems` systems, `--criteria`
criteria, one human label per item and one verdict per item from each of
`--judges` judges (defaults: 840 human labels and 54,600 verdicts, 55,440 in
all, as the campaign of issue 21). The report is built with
`report_from_inputs`, then rendered.

Prints the build time, the size of the Markdown and of the HTML report as
they are, the size of the Markdown with every row of every table (what it
would hold without cutting long tables), the longest tables, and the ratio of
the Markdown to the 377 KB the issue measured on such a campaign.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ISSUE_MARKDOWN_KB = 377.0  # issue 21: 55k labels, 65 judges, a 2,080-row table


def synthetic_inputs(judges: int, pairs: int, criteria: int, systems: int, seed: int):
    import numpy as np

    from calibration import metrics as M
    from calibration import selectors

    rng = np.random.default_rng(seed)
    names = [f"model-{k:02d}" for k in range(systems)]
    strength = rng.normal(0, 0.5, systems)
    accuracy = rng.uniform(0.55, 0.85, judges)
    columns: dict[str, list] = {
        k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner", "first_system")
    }

    def add(pair, criterion, rater, kind, a, b, winner, first):
        for key, value in zip(columns, (pair, criterion, "overall", rater, kind, a, b, winner, first)):
            columns[key].append(value)

    for p in range(pairs):
        i, j = rng.choice(systems, 2, replace=False)
        a, b = names[i], names[j]
        for c in range(criteria):
            p_a = 1 / (1 + np.exp(strength[j] - strength[i]))
            truth = a if rng.random() < p_a else b
            add(f"p{p}", f"c{c}", "human:crowd", "human", a, b, truth, None)
            for k in range(judges):
                right = rng.random() < accuracy[k]
                add(f"p{p}", f"c{c}", f"judge-{k:02d}", "judge", a, b, truth if right else (b if truth == a else a), a)
    table = M.LabelTable.from_columns(**columns)
    summaries = [
        selectors.JudgeSummary(
            name=f"judge-{k:02d}",
            model=f"model-{k:02d}",
            kind="imported",
            n_units=pairs,
            errors=0,
            n_calls=0,
            n_invalid_calls=0,
            cost_usd=0.0,
            prompt_tokens=0,
            cached_tokens=0,
            completion_tokens=0,
            mean_latency_ms=None,
        )
        for k in range(judges)
    ]
    return selectors.CalibrationInputs(
        table=table, judges=summaries, systems=sorted(set(names)), n_pairs=pairs, include_unsubmitted=False
    ), len(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", type=int, default=65)
    parser.add_argument("--pairs", type=int, default=420)
    parser.add_argument("--criteria", type=int, default=2)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from annotate.models import Campaign, CriterionSet
    from calibration.report import formats as report_formats
    from calibration.report.build import report_from_inputs

    inputs, n_labels = synthetic_inputs(args.judges, args.pairs, args.criteria, args.systems, args.seed)
    campaign = Campaign(name="Big labels-only", criterion_set=CriterionSet(key="arena", version=1), pair_mode=Campaign.PairMode.ALL)
    start = time.perf_counter()
    report = report_from_inputs(campaign, inputs, rounds=args.rounds)
    built = time.perf_counter() - start
    start = time.perf_counter()
    md = report_formats.render(report, "md")
    html = report_formats.render_html(report, svgs={})  # the charts' size does not depend on the tables
    rendered = time.perf_counter() - start
    kb = lambda text: len(text.encode()) / 1024  # noqa: E731
    print(f"{n_labels:,} labels and verdicts, {args.judges} judges, {args.pairs} pairs, {args.rounds} rounds")
    print(f"report built in {built:.1f} s, Markdown and HTML rendered in {rendered:.1f} s")
    print(f"Markdown: {kb(md):,.0f} KB ({kb(md) / ISSUE_MARKDOWN_KB:.2f} x the {ISSUE_MARKDOWN_KB:.0f} KB of issue 21)")
    print(f"HTML report (tables, charts left out): {kb(html):,.0f} KB")
    table_format = getattr(report_formats, "ROWS_SHOWN", None)
    if table_format is not None:
        from calibration.report import table_format as tf

        shown, tf.ROWS_SHOWN = tf.ROWS_SHOWN, 10**9
        whole = report_formats.render(report, "md")
        tf.ROWS_SHOWN = shown
        print(f"Markdown with every row of every table: {kb(whole):,.0f} KB; cut at {shown} rows: {kb(md) / kb(whole):.2f} of it")
        longest = sorted(report_formats.tables(report).values(), key=lambda t: -len(t.rows))[:4]
        print("longest tables: " + ", ".join(f"{t.key} {len(t.rows):,} rows" for t in longest))


if __name__ == "__main__":
    main()
