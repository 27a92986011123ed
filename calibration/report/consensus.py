"""The report's `consensus` section: agreement on unanimous, split and single-annotator items
(`metrics.consensus`, docs/calibration-report.md).

At scale the intervals of the judges' figures follow the judges' per-category intervals (computed
above `CATEGORY_INTERVALS_MAX_JUDGES` judges only when asked), and the annotators' own intervals are
computed for a panel only (at most `metrics.HUMAN_LIKENESS_MAX_ANNOTATORS` annotators); the pooled
humans' figures always have theirs. The section says which were computed.
"""

from __future__ import annotations

from calibration import metrics as M
from calibration.metrics.consensus import SPLIT_NOTE, STRATA, consensus
from calibration.report.sections import estimate


def _strata(figures: dict) -> dict:
    return {name: {"par": estimate(figures[name].par), "kappa": estimate(figures[name].kappa)} for name in STRATA}


def section(humans: M.LabelTable, judges: dict[str, M.LabelTable], rounds: int, seed: int, judge_rounds: int) -> dict | None:
    """None without human labels."""
    if not len(humans):
        return None
    n_annotators = len(humans.rater_names())
    annotator_rounds = rounds if n_annotators <= M.HUMAN_LIKENESS_MAX_ANNOTATORS else 0
    c = consensus(humans, judges, rounds, seed, judge_rounds=judge_rounds, annotator_rounds=annotator_rounds)
    return {
        "rule": c.rule,
        "note_rule": f"a judge whose PAR or kappa on split items exceeds the humans' own there: '{SPLIT_NOTE}'",
        "n_items": c.n_items,
        "split_share": {criterion: estimate(e) for criterion, e in c.split_share.items()},
        "humans": _strata(c.humans.strata),
        "annotators": [{"annotator": a.rater, "strata": _strata(a.strata)} for a in c.annotators],
        "judges": [{"judge": j.rater, "strata": _strata(j.strata), "note": j.note} for j in c.judges],
        "intervals": {"judges": judge_rounds == rounds, "annotators": annotator_rounds == rounds},
    }
