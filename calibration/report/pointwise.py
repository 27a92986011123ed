"""The report's `pointwise` section: judges against humans on answers about one article alone.

One entry per response type and scale of the campaign's one-article criteria (a checklist's yes /
no, a rating scale, an error count: `calibration.pointwise_selectors`), each with, per judge, the
figures of `calibration.metrics.pointwise_agreement` (binary: agreement and Cohen's kappa against
every human answer and against the human majority; rating: exact and within-one agreement,
weighted kappa, Spearman and Kendall against the human mean; count: MAE and RMSE; all but nominal:
the judge's mean, the humans', bias; nominal: agreement and Cohen's kappa against every answer and
the majority, and the confusion against the majority), the panel figures of `pointwise_panel`
(Fleiss' kappa among humans; Krippendorff's alpha ordinal and interval, ICC(2,1) and ICC(2,k);
nominal alpha; with and without the judge), the human leave-one-out ceiling, the alt-test with the
scoring that fits (accuracy for checklists and classes, negative RMSE for ratings and counts), and
each system's prediction-powered mean score (for classes: the share of each class). The
cross-protocol check (`metrics.crossprotocol`) says how often the pointwise difference of two
articles predicts the pairwise verdict on them, per criterion, for the humans and each judge.

Present only when the campaign has answers about one article: a pairwise report is unchanged.
Every figure carries n, the clusters it rests on (`n_pairs`: articles, or topics for the
cross-protocol figures) and a 95% CI.
"""

from __future__ import annotations

import math

import numpy as np

from calibration.metrics import alttest
from calibration.metrics.alttest_wins import Ratings
from calibration.metrics.crossprotocol import cross_protocol
from calibration.metrics.pointwise import NOMINAL
from calibration.metrics.pointwise_agreement import Figures, pointwise_statistics
from calibration.metrics.pointwise_panel import PanelFigures
from calibration.metrics.pointwise_powered import alt_test_long_form, powered_means, powered_shares
from calibration.metrics.pointwise_reference import CATEGORICAL, MEAN_ONLY, aggregated_reference
from calibration.pointwise_selectors import PointwiseInputs, pointwise_inputs
from calibration.report.alttest import NOT_SET
from calibration.report.sections import estimate, rounded
from calibration.report.tables.pointwise import response_label

STATEMENT = (
    "Answers about one article alone (checklists, rating scales, error counts, classes), one table per response type and scale "
    "(a list of classes is a scale of its own; a checklist whose N/A is a class is the three classes yes, no, na). "
    "Judges are compared with every annotator who answered the same article and criterion; the ceiling is each annotator "
    "against the others. CIs: 95% percentile bootstrap over articles (over topics for the cross-protocol check)."
)
CROSS_STATEMENT = (
    "Pairwise verdicts on the same articles and criteria (from {campaigns}): how often the pointwise difference "
    "(humans: the annotators' mean; a judge: its own answers) predicts the verdict, ties counted as a category; "
    "a judge's two orders are two verdicts."
)


def clean(value):
    """JSON-safe: NaN and infinities as None, numpy scalars as numbers, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _estimates(figures: dict) -> dict:
    return {name: estimate(est) for name, est in figures.items()}


def figures_dict(figures: Figures | PanelFigures) -> dict:
    out = {
        "figures": _estimates(figures.figures),
        "by_criterion": {c: _estimates(f) for c, f in figures.by_criterion.items()},
        "counts": dict(figures.counts),
    }
    if getattr(figures, "confusion", None):  # nominal: (rater's class x the majority's) counts
        out["confusion"] = figures.confusion
    return out


def _interval(interval) -> dict:
    low, high = interval.ci
    return {"value": rounded(interval.value), "ci": [rounded(low), rounded(high)], "se": rounded(interval.se),
            "n": interval.n, "n_pairs": interval.n_pairs}  # fmt: skip


def powered_entry(table, judge: str) -> dict:
    """Each system's prediction-powered mean (for classes: the share of each class) with the judge's answers."""
    if table.response == NOMINAL:  # a mean of class codes means nothing: the share of each class instead
        shares = powered_shares(table, judge)
        return {"systems": {}, "left_out": {}, "classes": {name: _systems(*found) for name, found in shares.items()}}
    return _systems(*powered_means(table, judge))


def _systems(means: dict, left_out: dict) -> dict:
    systems = {
        name: {
            "ppi": _interval(m.ppi),
            "human": _interval(m.human),
            "judge": _interval(m.judge),
            "lam": rounded(m.lam),
            "n_effective": rounded(m.n_effective),
        }  # fmt: skip
        for name, m in means.items()
    }
    return {"systems": systems, "left_out": left_out}


def alt_test_entry(table, judge: str, *, epsilon: float | None, unit: str, rounds: int, seed: int) -> dict:
    """The judge's alt-test on one table (the scoring its answers take), overall and by criterion."""
    humans, own, scoring = alt_test_long_form(table, judge)
    if epsilon is None:
        return {"scoring": scoring, "note": NOT_SET}
    result = alttest.alt_test(Ratings(**humans), Ratings(**own), epsilon=epsilon, unit=unit, scoring=scoring, rounds=rounds, seed=seed)
    per = alttest.alt_test_by_criterion(Ratings(**humans), Ratings(**own), epsilon=epsilon, scoring=scoring, rounds=rounds, seed=seed)
    return {"scoring": scoring, "note": None, **result.as_dict(), "by_criterion": per.as_dict()}


def _pooled_alt_test(tables: list, judge: str, *, epsilon: float, unit: str, rounds: int, seed: int) -> dict:
    """The alt-test of ``judge`` over the criteria of several tables at once (scales and response types
    pooled: each comparison is within one item, scored the way its table's answers are)."""
    groups = []
    for table in tables:
        humans, own, scoring = alt_test_long_form(table, judge)
        groups.append((Ratings(**humans), Ratings(**own), scoring))
    result = alttest.alt_test_pooled(groups, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed)
    per = alttest.alt_test_by_criterion_pooled(groups, epsilon=epsilon, rounds=rounds, seed=seed)
    return {"scoring": result.scoring, "note": None, **result.as_dict(), "by_criterion": per.as_dict()}


def _label(response: str, scale) -> str:
    return response_label({"response": response, "scale": scale})


def pooled_section(inputs: PointwiseInputs, *, epsilon: float | None, unit: str, rounds: int, seed: int) -> list[dict]:
    """The alt-test pooled over tables: over every one-article criterion of the rubric, and over the
    scales of one response type, wherever that pools more than one table (one table's test is its
    own). Each entry: its ``scope`` ("all" or the response type), the tables it pools and, per judge
    of any of them, the test as :func:`alt_test_entry` gives it."""
    groups = []
    if len(inputs.tables) > 1:
        groups.append(("all", list(inputs.tables)))
    by_response: dict[str, list] = {}
    for key in inputs.tables:
        by_response.setdefault(key[0], []).append(key)
    groups += [(response, keys) for response, keys in by_response.items() if 1 < len(keys) < len(inputs.tables)]
    out = []
    for scope, keys in groups:
        tables = [inputs.tables[key] for key in keys]
        judges = sorted({name for t in tables for name in t.judges})
        entry = {"scope": scope, "pools": [_label(*key) for key in keys], "judges": {}}
        for name in judges:
            having = [t for t in tables if name in t.judges]
            if epsilon is None:
                entry["judges"][name] = {
                    "scoring": "+".join(dict.fromkeys(alt_test_long_form(t, name)[2] for t in having)),
                    "note": NOT_SET,
                }
            else:
                entry["judges"][name] = _pooled_alt_test(having, name, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed)
        out.append(entry)
    return out


def _cross(table, inputs: PointwiseInputs, rounds: int, seed: int) -> dict | None:
    if table.response == NOMINAL:  # classes have no order: no pointwise difference to predict a winner with
        return None
    criteria = set(table.criteria)
    verdicts = [v for v in inputs.verdicts if v.criterion in criteria]
    if not verdicts:
        return None
    result = cross_protocol(table, verdicts, rounds=rounds, seed=seed)
    return {
        "statement": CROSS_STATEMENT.format(campaigns=", ".join(inputs.pairwise_campaigns)),
        "campaigns": inputs.pairwise_campaigns,
        "humans": figures_dict(result.humans),
        "judges": {name: figures_dict(c) for name, c in result.judges.items()},
    }


AGGREGATED = ("dawid-skene", "mace")


def _reference(table, method: str, rounds: int, seed: int) -> dict | None:
    """Each judge against one Dawid-Skene or MACE label per item where the answers are categorical; for
    numeric answers the statement that the reference stays the annotators' answers. None for another reference."""
    if method not in AGGREGATED:
        return None
    if table.response not in CATEGORICAL:
        return {"method": method, "applied": False, "note": MEAN_ONLY}
    found = aggregated_reference(table, method, rounds=rounds, seed=seed)
    return {
        "method": method,
        "applied": True,
        "n_items": found.n_items,
        "unresolved": found.unresolved,
        "competence": {name: rounded(value) for name, value in found.competence.items()},
        "judges": {name: figures_dict(f) for name, f in found.judges.items()},
    }


def _table_section(key, table, inputs: PointwiseInputs, *, epsilon, unit, rounds, seed, human_reference: str = "majority") -> dict:
    response, scale = key
    stats = pointwise_statistics(table, rounds=rounds, seed=seed)
    judges = {}
    for name in table.judges:
        judges[name] = {
            "figures": figures_dict(stats.judge_figures[name]),
            "panel": figures_dict(stats.judge_panels[name]),
            "alt_test": alt_test_entry(table, name, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed),
            "powered_means": powered_entry(table, name),
        }
    return {
        "response": response,
        "scale": list(scale) if scale else None,
        "criteria": {c: inputs.responses.get(c, "") for c in table.criteria},
        "n_answers": stats.n_answers,
        "n_items": stats.n_items,
        "n_articles": stats.n_clusters,
        "humans": list(stats.humans),
        "human_ceiling": figures_dict(stats.ceiling),
        "annotators": {name: figures_dict(f) for name, f in stats.annotators.items()},
        "human_panel": figures_dict(stats.human_panel),
        "judges": judges,
        "cross_protocol": _cross(table, inputs, rounds, seed),
        "human_reference": _reference(table, human_reference, rounds, seed),
    }


def section(
    inputs: PointwiseInputs | None,
    *,
    epsilon: float | None,
    unit: str,
    rounds: int = 1000,
    seed: int = 0,
    human_reference: str = "majority",
) -> dict | None:
    """The `pointwise` section, or None when the campaign has no answer about one article."""
    if inputs is None:
        return None
    tables = [
        _table_section(key, table, inputs, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed, human_reference=human_reference)
        for key, table in inputs.tables.items()
    ]
    return clean(
        {
            "statement": STATEMENT,
            "cluster": "article",
            "rounds": rounds,
            "seed": seed,
            "epsilon": epsilon,
            "tables": tables,
            "alt_test_pooled": pooled_section(inputs, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed),
            "judge_answers": inputs.judge_answers,
        }
    )


def pointwise_add(
    report: dict, campaign, include_unsubmitted: bool, *, unit: str, rounds: int, seed: int, human_reference: str = "majority"
) -> None:
    """Adds the `pointwise` section and a note to a campaign's report when it has answers about one
    article; leaves the report as it is otherwise. The alt-test's ε is the report's."""
    inputs = pointwise_inputs(campaign=campaign, include_unsubmitted=include_unsubmitted)
    found = section(inputs, epsilon=report["alt_test"]["epsilon"], unit=unit, rounds=rounds, seed=seed, human_reference=human_reference)
    if found is not None:
        report["pointwise"] = found
        report["notes"].append(pointwise_note(found))
        if human_reference in AGGREGATED:
            report["notes"].append(reference_note(found, human_reference))


def reference_note(section: dict, method: str) -> str:
    """Which one-article answers the aggregated reference was applied to, and which kept the annotators' answers."""
    applied, kept = [], []
    for t in section["tables"]:
        label = response_label(t)
        ref = t["human_reference"]
        if ref["applied"]:
            applied.append(f"{label} ({ref['n_items']:,} items, {ref['unresolved']:,} unresolved)")
        else:
            kept.append(label)
    text = f"One-article answers and --human-reference {method}: "
    text += f"{method} fitted to {', '.join(applied)}, each judge compared with its labels" if applied else f"{method} applied to none"
    if kept:
        text += f"; {', '.join(kept)}: majority/mean only (numeric answers: the reference stays every annotator's answers)"
    return text + "."


def pointwise_note(section: dict) -> str:
    """One line for the report's notes: the pairwise figures above do not cover these answers."""
    parts = [f"{t['n_answers']:,} {response_label(t)} answers" for t in section["tables"]]
    text = f"Answers about one article alone ({', '.join(parts)}) are in the pointwise section, not in the pairwise figures."
    for entry in section.get("alt_test_pooled", []):
        verdicts = [f"{name} {_verdict(alt)}" for name, alt in entry["judges"].items() if not alt["note"]]
        if verdicts:
            text += f" Alt-test pooled over {', '.join(entry['pools'])}: {'; '.join(verdicts)}."
    return text


def _verdict(alt: dict) -> str:
    if not alt["ran"]:
        return "cannot run"
    return (
        f"{'passes' if alt['passes'] else 'fails'} (ω {alt['omega']:.2f}, {alt['n_rejected']} of {alt['n_annotators']} annotators beaten)"
    )
