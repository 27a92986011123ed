"""The report's `human_position` section and table: each annotator's position consistency and
first-position rate, the human counterparts of the judges' position figures (issue 26 item 2).

Both read the annotators' labels with their swapped repeats (`Campaign.repeat_rate`): a repeat shows a
pair the annotator submitted again, later, in the other order. They are computed by the judges' own
code (`metrics.bias` through `metrics.quality.human_position`), with the same pair bootstrap. Every
other figure of the report reads the originals only: a repeat is never a second vote.
"""

from __future__ import annotations

from calibration import metrics as M
from calibration.metrics.quality import human_position
from calibration.report.sections import display, estimate
from calibration.report.table_format import DASH, Table, nested

MARGIN = 0.1
CONSISTENCY_RULE = (
    "position consistency: of the criteria an annotator answered on a pair and again on its swapped repeat (the same pair, "
    "later, in the other order), the share answered the same both times: the same article, or a tie both times; a tie "
    "against a winner counts as inconsistent; n = repeated criteria"
)
RATE_RULE = (
    "first-position rate: of the annotator's answers naming a winner with a known display order (repeats included, ties "
    "left out), the share that picked the article shown first; 0.5 is no lean"
)
LEAN_RULE = f"lean: the first-position rate's whole 95% CI above {0.5 + MARGIN:g} (first) or below {0.5 - MARGIN:g} (second)"
CI_RULE = "95% CIs: the pair bootstrap of the judges' position figures (every answer on a pair, both orders, drawn together)"


def section(position: M.LabelTable, rounds: int, seed: int) -> dict:
    """Per annotator (by name): both figures as estimates, the lean, and how many repeated criteria they rest on."""
    rows = []
    for p in human_position(position, margin=MARGIN, rounds=rounds, seed=seed) if len(position) else []:
        rows.append(
            {
                "name": display(p.rater),
                "position_consistency": estimate(p.consistency),
                "first_position_rate": estimate(p.first_position_rate),
                "lean": p.lean,
            }
        )
    return {
        "annotators": rows,
        "n_repeated": sum(r["position_consistency"]["n"] for r in rows),
        "consistency_rule": CONSISTENCY_RULE,
        "rate_rule": RATE_RULE,
        "lean_rule": LEAN_RULE,
        "ci_rule": CI_RULE,
    }


def position_table(report: dict) -> Table:
    section = report.get("human_position")
    headers = ["Annotator", "Position consistency [95% CI] (n)", "First-position rate [95% CI] (n)", "Lean"]
    numeric = [False, True, True, False]
    title = "Position bias of each annotator (swapped repeats)"
    if section is None:
        return Table("human_position", title, headers, [], numeric, "not in this report (made before swapped repeats)")
    rows = [
        [a["name"], nested(a["position_consistency"]), nested(a["first_position_rate"]), a["lean"] or DASH] for a in section["annotators"]
    ]
    note = (
        f"{section['n_repeated']:,} repeated criteria in all. {section['consistency_rule'].capitalize()}. {section['rate_rule'].capitalize()}. "
        f"{section['lean_rule'].capitalize()}. {section['ci_rule']}."
    )
    return Table("human_position", title, headers, rows, numeric, note)
