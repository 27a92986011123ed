"""The label planner's (d): items per annotator for the alt-test, by simulation from the pilot's
agreement (`calibration.metrics.alttest_plan`, whose docstring states the model)."""

from __future__ import annotations

import numpy as np

from calibration import metrics as M
from calibration.metrics import alttest_plan
from calibration.metrics.alttest import MIN_ANNOTATORS, MIN_ITEMS

TARGET = 0.8
SIMULATIONS = 400
SIZES = tuple(range(MIN_ITEMS, 301, 10))
CATEGORIES = 3  # A wins, B wins, tie
NOT_SET = "ε not set: the alt-test needs an ε chosen and justified (the authors suggest 0.2 experts, 0.15 skilled, 0.1 crowd)"


def pilot_agreement(humans: M.LabelTable) -> tuple[float | None, int, int]:
    """(the share of two annotators' labels on one item that agree, the label pairs it rests on, the
    median annotators per item among the items with two or more)."""
    if not len(humans):
        return None, 0, 0
    items, item_of = np.unique(humans.item, return_inverse=True)
    counts = np.bincount(item_of * 3 + humans.outcome, minlength=len(items) * 3).reshape(-1, 3)
    n = counts.sum(axis=1)
    label_pairs = int((n * (n - 1) // 2).sum())
    if not label_pairs:
        return None, 0, 0
    agreeing = int((counts * (counts - 1) // 2).sum())
    return agreeing / label_pairs, label_pairs, int(np.median(n[n >= 2]))


def _probability(p: alttest_plan.PassProbability | None) -> dict | None:
    return None if p is None else {"value": round(p.value, 4), "ci": [round(p.ci_low, 4), round(p.ci_high, 4)], "n": p.n}


def alt_test_plan(humans: M.LabelTable, *, epsilon: float | None, reason: str | None, margin: float, seed: int = 0) -> dict:
    """Items per annotator at which a judge as good as the humans passes the alt-test with
    probability TARGET, and the chance there that a judge `margin` worse (in agreement with an
    annotator) passes. Needs epsilon and a pilot with two or more labels on some items."""
    agreement, label_pairs, per_item = pilot_agreement(humans)
    n_annotators = max(MIN_ANNOTATORS, per_item)
    out = {
        "epsilon": epsilon,
        "epsilon_reason": reason,
        "margin": margin,
        "target": TARGET,
        "n_annotators": n_annotators,
        "n_categories": CATEGORIES,
        "pilot_agreement": None if agreement is None else round(agreement, 4),
        "pilot_label_pairs": label_pairs,
        "human_kappa": None,
        "items_needed": None,
        "at_items": None,
        "equal": None,
        "worse": None,
        "simulations": SIMULATIONS,
        "model": None,
        "note": None,
    }
    if epsilon is None:
        out["note"] = NOT_SET
        return out
    if agreement is None:
        out["note"] = "No item has labels from two annotators yet: there is no pilot agreement to simulate from."
        return out
    try:
        needed = alttest_plan.alt_test_items_needed(
            target=TARGET, epsilon=epsilon, sizes=SIZES, n_annotators=n_annotators, agreement=agreement,
            n_categories=CATEGORIES, margin=margin, simulations=SIMULATIONS, seed=seed,
        )  # fmt: skip
    except ValueError as exc:
        out["note"] = f"{exc}: the simulation model does not fit this pilot."
        return out
    at = needed.at(needed.n_items) if needed.n_items is not None else needed.curve[-1]
    out.update(
        human_kappa=round(at.human_kappa, 4),
        items_needed=needed.n_items,
        at_items=at.n_items,
        equal=_probability(at.equal),
        worse=_probability(at.worse),
        model=at.model,
    )
    if needed.n_items is None:
        out["note"] = (
            f"Even {SIZES[-1]} items per annotator do not give a judge as good as the humans a {TARGET:.0%} chance to pass at ε = "
            f"{epsilon:g}: the figures are at {SIZES[-1]}."
        )
    return out
