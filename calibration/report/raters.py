"""The report's rankings per rater: each rater's Bradley-Terry fits (overall and per category) and
win rates, their common anchor systems, and Kendall's tau against the humans."""

from __future__ import annotations

from calibration import metrics as M
from calibration.metrics.rater_fits import ANCHOR  # noqa: F401 (one definition; the report imports it here)
from calibration.report import sections

HUMANS = "humans"
# The judges' per-category Bradley-Terry intervals (2 fits of 1,000 rounds per judge and category) cost
# two thirds of a big report; by default ("auto") they are computed when the report has at most this
# many judges, and for any number when asked ("all"). The humans' are always computed.
CATEGORY_INTERVALS_MAX_JUDGES = 12
CATEGORY_INTERVALS = ("auto", "all")
CATEGORY_INTERVAL_NOTE = "interval not computed"


class Rater:
    """The labels of one rater (merged to one verdict per item for judges) and its ranking figures."""

    def __init__(self, name: str, table: M.LabelTable, reference: str | None, fits: tuple | None, notes: list[str]) -> None:
        self.name, self.table = name, table
        self.bt = self.bt_by_category = None
        self.win_rates = None
        if not len(table):
            return
        if fits is None:
            notes.append(
                f"{name}: the reference system '{reference}' is not among its compared systems, so it has no Bradley-Terry scores or win rates."
            )
            return
        self.bt, self.bt_by_category, self.win_rates = fits
        if self.bt.not_estimable:
            reasons = "; ".join(f"{s} ({self.bt.scores[s].reason.removeprefix('not estimable: ')})" for s in self.bt.not_estimable)
            notes.append(f"{self.name}: no finite Bradley-Terry score for {reasons}.")


def shared_anchors(fits: list[M.BTResult]) -> list[str] | None:
    """The anchor systems of every fit of one table: those all of them keep finite in every round."""
    if not fits:
        return []
    common = set(fits[0].candidate_anchors).intersection(*(f.candidate_anchors for f in fits[1:]))
    return sorted(common) or None


def anchor_raters(raters: list[Rater]) -> list[str] | None:
    """Without a reference, places every rater's scores on one scale: the mean of the same anchor
    systems is 1000 for all of them, overall and in each category. Returns the overall set (None
    when the raters share no system finite in every round; each then keeps its own)."""
    fits = [r for r in raters if r.bt is not None]
    shared = shared_anchors([r.bt for r in fits])
    if shared:
        for r in fits:
            if list(r.bt.anchor_systems) != shared:
                r.bt = r.bt.recentred(shared)
    categories = sorted({c for r in fits for c, bt in (r.bt_by_category or {}).items() if bt is not None})
    for category in categories:
        holders = [r for r in fits if (r.bt_by_category or {}).get(category) is not None]
        common = shared_anchors([r.bt_by_category[category] for r in holders])
        for r in holders if common else []:
            if list(r.bt_by_category[category].anchor_systems) != common:
                r.bt_by_category[category] = r.bt_by_category[category].recentred(common)
    return shared


def kendall(raters: list[Rater]) -> dict:
    human_bt = raters[0].bt if raters and raters[0].name == HUMANS else None
    kendall = {}
    for r in raters:
        if r.name == HUMANS:
            continue
        if human_bt is None or r.bt is None:
            kendall[r.name] = {"tau": None, "p_value": None, "n_systems": 0}
        else:
            tau = M.kendall_tau(human_bt, r.bt)
            kendall[r.name] = {"tau": sections.rounded(tau.tau), "p_value": sections.rounded(tau.p_value), "n_systems": tau.n}
    return kendall


def check_category_intervals(value: str) -> str:
    if value not in CATEGORY_INTERVALS:
        raise ValueError(f"category intervals must be one of {', '.join(CATEGORY_INTERVALS)}, not '{value}'")
    return value
