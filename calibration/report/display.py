"""The calibration report as display tables, shared by the Markdown, the HTML report and the dashboard.

Every figure of the JSON report reaches a table, a heading line or a note. Each estimate reads
`value [lo, hi]† (n=…, p pairs)`: `†` when it rests on fewer than 30 pairs, and
`[too few pairs for an interval]` in place of the interval below `MIN_PAIRS_FOR_CI` pairs.
A table longer than `ROWS_SHOWN` rows is shortened by its renderer (`rows_head` / `rows_rest`);
every row stays in the JSON, and `render_table_csv` writes any table whole.

Everything here works on the report dict of `calibration.report.build`; nothing reads the database.
"""

from __future__ import annotations

from dataclasses import dataclass

from calibration.report.acceptable import acceptable_tables
from calibration.report.blinding import blinding_tables
from calibration.report.build import HUMANS
from calibration.report.position import position_table
from calibration.report.table_format import (
    DASH,
    SMALL_MARK,
    Table,
    fmt_estimate,
    fmt_n,
    fmt_score,
    fmt_usd,
    fmt_value,
    nested,
)
from calibration.report.tables.agreement import agreement_tables, powered_tables
from calibration.report.tables.alttest import alttest_tables
from calibration.report.tables.design import design_tables
from calibration.report.tables.gold import gold_tables
from calibration.report.tables.orderings import KEYS as ORDERING_KEYS
from calibration.report.tables.orderings import ordering_tables
from calibration.report.tables.plan import plan_tables
from calibration.report.tables.pointwise import KEYS as POINTWISE_KEYS
from calibration.report.tables.pointwise import pointwise_tables
from calibration.report.tables.reference import reference_line, reference_tables
from calibration.report.tables.selective import selective_tables
from calibration.report.tables.steps import step_tables
from calibration.report.tables.ties import tie_tables

__all__ = ["DASH", "SMALL_MARK", "Table", "fmt_estimate", "fmt_score", "fmt_usd", "fmt_value", "tables", "heading", "ORDER"]


def _flagged(source: dict, name: str, digits: int = 3) -> str:
    text = fmt_estimate(source.get(name), source.get(f"{name}_ci"), digits, source.get(f"{name}_ci_note"))
    return text + SMALL_MARK if name in source.get("small_n_figures", []) and text != DASH else text


def _with_n(source: dict, name: str, n_key: str | None = None) -> str:
    return f"{_flagged(source, name)} {fmt_n(source[n_key or name + '_n'], source.get(f'{name}_n_pairs'))}"


def cost_cell(judge: dict, key: str = "cost_per_pair_usd") -> str:
    """A judge's cost: "cost unknown" for a judge without prices, never $0."""
    return "cost unknown" if judge["cost_usd"] is None else fmt_usd(judge[key])


MAJORITY_HEADERS = {"drop": "ties dropped", "half": "ties counted 1/k", "draw": "ties drawn"}


def majority_words(report: dict) -> tuple[str, str]:
    """(the majority-vote accuracy's column words, the sentence stating its convention and PAR's name)."""
    p = report["parameters"]
    ties = p.get("majority_ties", "drop")
    rule = p.get("majority_rule") or "the majority vote is each item's strict majority; items without one are left out"
    sentence = (
        f"PAR is the mean single-label accuracy (the judge against every human label, each counting once). "
        f"Majority-vote accuracy (--majority-ties {ties}): {rule}. Cohen's κ: against the strict majority, items without one left out."
    )
    return f"Majority-vote accuracy ({MAJORITY_HEADERS[ties]})", sentence


def _judge_tables(report: dict, note: str) -> dict[str, Table]:
    rows, work = [], []
    majority_header, majority_sentence = majority_words(report)
    for j in report["judges"]:
        flags = []
        if j["name"] in report["pareto_frontier"]:
            flags.append("Pareto")
        if j["name"] == report["recommended_judge"]:
            flags.append("recommended")
        elif j["name"] in report.get("tied_for_best", []) and len(report["tied_for_best"]) > 1:
            flags.append("tied for best")
        if j.get("members"):
            flags.append("ensemble")
        rows.append(
            [
                j["name"] + (f" ({j['model']})" if j["model"] else ""),
                _with_n(j, "par", "n_labels"),
                _with_n(j, "par_majority"),
                _with_n(j, "par_no_ties"),
                _with_n(j, "cohen_kappa"),
                _with_n(j, "position_consistency"),
                _with_n(j, "first_position_rate"),
                _with_n(j, "prefers_longer"),
                cost_cell(j),
                f"{j['n_items']:,}" + (SMALL_MARK if j["small_n"] else ""),
                str(j["errors"]),
                ", ".join(flags),
            ]
        )
        tokens = j["tokens"]
        work.append(
            [
                j["name"],
                f"{j['n_verdicts']:,}",
                f"{j['n_items_judged']:,}",
                f"{j['n_pairs_judged']:,}",
                f"{j['n_swapped_items']:,}",
                f"{j['n_items']:,}",
                f"{j['n_no_majority']:,}",
                fmt_value(j["share_kept_no_ties"]),
                f"{j.get('n_unparsable', 0):,}",
                f"{j['n_units']:,} ({j['errors']:,})",
                f"{j['n_calls']:,} ({j['n_invalid_calls']:,})",
                cost_cell(j, "cost_usd"),
                cost_cell(j, "cost_per_1000_verdicts_usd"),
                f"{fmt_usd(j['possibly_billed_usd'])} ({j['n_possibly_billed_calls']:,} calls)",
                f"{tokens['prompt']:,} / {tokens['cached']:,} / {tokens['completion']:,}",
                DASH if j["mean_latency_ms"] is None else f"{j['mean_latency_ms']:,.0f} ms",
            ]
        )
    unrecorded = "; ".join(
        f"{j['name']}: {j['n_possibly_billed_calls']:,} call(s) sent with no answer recorded, possibly billed up to {fmt_usd(j['possibly_billed_usd'])}"
        for j in report["judges"]
        if j.get("n_possibly_billed_calls") and not j.get("members")
    )
    unknown = report.get("cost_unknown", [])
    return {
        "judges": Table(
            "judges",
            "Judges against the humans",
            [
                "Judge",
                "PAR (mean single-label accuracy)",
                majority_header,
                "PAR without ties",
                "Cohen's κ",
                "Position consistency",
                "First-position rate",
                "Prefers longer",
                "Cost / pair",
                "Items",
                "Errors",
                "",
            ],
            rows,
            [False] + [True] * 10 + [False],
            f"{note} {majority_sentence}"
            + (
                f" Costs are the calls recorded; not in them: {unrecorded} (a run was killed with requests in flight)."
                if unrecorded
                else ""
            )
            + (f" Cost unknown (no prices): {', '.join(unknown)}." if unknown else ""),
        ),
        "judge_work": Table(
            "judge_work",
            "Judges: verdicts, calls and costs",
            [
                "Judge",
                "Verdicts",
                "Items judged",
                "Pairs judged",
                "Swapped items",
                "Items compared",
                "Items without a strict human majority",
                "Share kept without ties",
                "Unparsable",
                "Units (errors)",
                "Calls (invalid)",
                "Cost",
                "Cost / 1,000 verdicts",
                "Possibly billed",
                "Tokens (prompt / cached / completion)",
                "Mean latency",
            ],
            work,
            [False] + [True] * 15,
            "Verdicts count both orders; items compared: judged and labelled by a human; unparsable: verdicts the judge failed to give "
            "(one per criterion and order of its units left in error). Costs in USD; an ensemble's cost is the sum of its members'.",
        ),
    }


def _humans_table(report: dict, note: str) -> Table:
    h = report["humans"]
    fleiss = h["fleiss_kappa"]
    return Table(
        "humans",
        "Human ceiling",
        ["Figure", "Value"],
        [
            ["Labels / annotators / items / pairs", f"{h['n_labels']:,} / {h['n_annotators']:,} / {h['n_items']:,} / {h['n_pairs']:,}"],
            ["Items with ≥ 2 labels", f"{h['n_items_multi']:,}"],
            ["PAR, leave one out (each label against the others' strict majority; ties dropped)", _with_n(h, "par_leave_one_out")],
            ["Labels left out of the leave-one-out PAR (the other annotators split, or there are none)", f"{h['n_loo_excluded']:,}"],
            ["PAR, all pairs of labels", _with_n(h, "par_all_pairs")],
            ["Krippendorff's α (items with ≥ 2 labels)", _with_n(h, "krippendorff_alpha")],
            [
                f"Fleiss' κ (items with {fleiss['raters_per_item'] or DASH} labels; {fleiss['n_items_left_out']:,} others left out)",
                nested(fleiss),
            ],
            ["Prefers longer", _with_n(h, "prefers_longer")],
            ["First-position rate", _with_n(h, "first_position_rate")],
        ],
        [False, True],
        note,
    )


def _cell(entry: dict | None, key: str) -> str:
    return DASH if not entry else nested(entry, key)


def _ranking_tables(report: dict, note: str) -> dict[str, Table]:
    out: dict[str, Table] = {}
    categories = report["campaign"]["categories"]
    h = report["humans"]
    cat_rows = [[f"{HUMANS} (leave one out)"] + [_cell(h["by_category"].get(c), "par_leave_one_out") for c in categories]]
    cat_rows += [[j["name"]] + [_cell(j["by_category"].get(c), "par") for c in categories] for j in report["judges"]]
    out["categories"] = Table("categories", "PAR per category", ["Rater"] + categories, cat_rows, [False] + [True] * len(categories), note)
    crit_rows = [[j["name"], criterion, nested(entry, "par")] for j in report["judges"] for criterion, entry in j["by_criterion"].items()]
    out["criteria"] = Table("criteria", "PAR per criterion", ["Judge", "Criterion", "PAR"], crit_rows, [False, False, True], note)
    bt_rows = []
    for rater, scores in report["bradley_terry"].items():
        for s in scores or []:
            rank = DASH if s.get("rank") is None else str(s["rank"])
            pairs = DASH if s.get("n_pairs") is None else f"{s['n_pairs']:,}"
            bt_rows.append([rater, s["system"], rank, fmt_score(s), f"{s['n']:,}", pairs, f"{s['wins']:g} / {s['losses']:g}"])
    tolerance = report["parameters"].get("tie_tolerance")
    out["bradley_terry"] = Table(
        "bradley_terry",
        "Bradley–Terry scores",
        ["Rater", "System", "Rank", "Score", "Comparisons", "Pairs", "Wins / losses"],
        bt_rows,
        [False, False, True, True, True, True, True],
        f"Elo-like scale; {report['parameters']['anchor']['text']}. A system with no finite maximum-likelihood score "
        "(e.g. it never wins) is not estimable and says why; ∞: the CI is unbounded on that side. Ties count ½. "
        + (f"Scores within {tolerance:g} points share a rank. " if tolerance is not None else "")
        + note,
    )
    meta_rows = [
        [
            rater,
            f"{m['n_comparisons']:,}",
            ", ".join(m["not_estimable"]) or DASH,
            f"{m['rounds_degenerate']:,}",
            ", ".join(m["anchor_systems"]),
        ]
        for rater, m in report["bradley_terry_meta"].items()
        if m is not None
    ]
    out["bradley_terry_meta"] = Table(
        "bradley_terry_meta",
        "Bradley–Terry fits",
        ["Rater", "Comparisons", "Not estimable", "Rounds with a system out of the group", "Anchor systems"],
        meta_rows,
        [False, True, False, True, False],
        f"Rounds out of {report['parameters']['rounds']:,}; anchor systems: the systems whose mean score is the anchor's.",
    )
    by_cat_rows = []
    for rater, per_category in report["bradley_terry_by_category"].items():
        if not per_category:
            continue
        systems = sorted({s["system"] for scores in per_category.values() for s in scores or []})
        for system in systems:
            cells = []
            for c in categories:
                entry = next((s for s in per_category.get(c) or [] if s["system"] == system), None)
                cells.append(DASH if entry is None else f"{fmt_score(entry)} {fmt_n(entry['n'], entry.get('n_pairs'))}")
            by_cat_rows.append([rater, system] + cells)
    out["bradley_terry_by_category"] = Table(
        "bradley_terry_by_category",
        "Bradley–Terry scores per category",
        ["Rater", "System"] + categories,
        by_cat_rows,
        [False, False] + [True] * len(categories),
        "Each category fitted on its own labels, on the same scale rule as above; — : the system is not compared in the category, "
        "or the category's labels lack the reference."
        + (
            ""
            if report["parameters"].get("category_intervals", {}).get("judges_computed", True)
            else f" Judges' rows: scores and ranks without intervals (more than {report['parameters']['category_intervals']['max_judges']} "
            "judges; `calibration_report --category-intervals all` computes them)."
        ),
    )
    out["kendall_tau"] = Table(
        "kendall_tau",
        "Ranking agreement with the humans (Kendall's τ)",
        ["Judge", "τ", "p", "Systems"],
        [[name, fmt_value(k["tau"]), fmt_value(k["p_value"]), str(k["n_systems"])] for name, k in report["kendall_tau"].items()],
        [False, True, True, True],
        "τ-b on the systems both rank; scores within the tie tolerance are tied; not estimable systems rank at ±∞."
        if report["kendall_tau"]
        else "",
    )
    win_rows = []
    for rater, systems in report["win_rates"].items():
        for system, figures in (systems or {}).items():
            o = figures["overall"]
            overall = fmt_estimate(o["rate"], o["ci"], note=o.get("ci_note")) + (SMALL_MARK if o["small_n"] else "")
            pairs = DASH if o.get("n_pairs") is None else f"{o['n_pairs']:,}"
            win_rows.append([rater, system, overall, f"{o['n']:,}", pairs] + [_cell(figures.get(c), "rate") for c in categories])
    reference = report["parameters"]["reference"]
    out["win_rates"] = Table(
        "win_rates",
        f"Win rate against {reference}" if reference else "Win rate against the field (every comparison)",
        ["Rater", "System", "Win rate (tie = ½)", "Labels", "Pairs"] + categories,
        win_rows,
        [False, False, True, True, True] + [True] * len(categories),
        note,
    )
    return out


def _comparisons(report: dict) -> Table:
    rows = []
    for c in report["comparisons"]:
        significant = "cannot tell" if c.get("ci_note") else ("yes" if c["significant"] else "no")
        rows.append(
            [
                c["a"],
                c["b"],
                fmt_estimate(c["difference"], c["ci"], note=c.get("ci_note")) + (SMALL_MARK if c["small_n"] else ""),
                significant,
                f"{fmt_value(c['par_a'])} / {fmt_value(c['par_b'])}",
                f"{c['n']:,}",
                f"{c['n_pairs']:,}",
            ]
        )
    return Table(
        "comparisons",
        "Paired PAR differences",
        ["A", "B", "PAR(A) − PAR(B)", "Significant", "PAR(A) / PAR(B) on common labels", "Labels", "Pairs"],
        rows,
        [False, False, True, False, True, True, True],
        "Same resampled pairs for both judges; significant when the 95% CI excludes 0.",
    )


def tables(report: dict) -> dict[str, Table]:
    """The report's figures as tables of display strings, keyed by table."""
    p = report["parameters"]
    note = (
        f"{SMALL_MARK}: resting on fewer than {p['small_n_threshold']} pairs. Brackets: 95% pair-bootstrap CI ({p['rounds']:,} rounds); "
        f"n: observations, pairs: the pairs they come from (the bootstrap resamples pairs)."
    )
    out: dict[str, Table] = {}
    out.update(_judge_tables(report, note))
    out["humans"] = _humans_table(report, note)
    out["human_position"] = position_table(report)
    out.update(blinding_tables(report))
    out["comparisons"] = _comparisons(report)
    out.update(_ranking_tables(report, note))
    out.update(agreement_tables(report, note))
    out.update(tie_tables(report, note))
    out.update(powered_tables(report))
    out.update(alttest_tables(report))
    out.update(selective_tables(report))
    out.update(reference_tables(report))
    out.update(plan_tables(report))
    out.update(design_tables(report))  # actively sampled campaigns only
    out.update(acceptable_tables(report))  # campaigns that ask for every acceptable verdict only
    out.update(gold_tables(report))  # campaigns with known-answer pairs only
    out.update(step_tables(report))  # campaigns that show the agents' steps only
    out.update(pointwise_tables(report))  # only when the report has answers about one article
    out.update(ordering_tables(report))  # only when the rubric asks rankings
    return out


# The order of the Markdown file (agreement among raters, then the deviations from the study plan, last) and of the HTML report.
ORDER = {
    "md": [
        "judges",
        "judge_work",
        "humans",
        "alt_test",
        "alt_test_criteria",
        "alt_test_annotators",
        "selective",
        "sensitivity",
        "competence",
        "human_position",
        "blinding",
        "verdicts_by_guess",
        "style_control",
        "comparisons",
        "categories",
        "criteria",
        "bradley_terry",
        "bradley_terry_meta",
        "bradley_terry_by_category",
        "kendall_tau",
        "win_rates",
        "ppi_win_rates",
        "ppi_bradley_terry",
        "ppi_judges",
        "annotator_pairs",
        "annotators",
        "judge_pairs",
        "judge_pairs_list",
        "human_likeness",
        "consensus",
        "split_share",
        "tie_accuracy",
        "davidson",
        "soft_labels",
        "soft_label_items",
        "plan",
    ],
}


# Every table a report can hold: the design table (actively sampled campaigns only, first when there) and the
# one-article tables (campaigns with answers about one article only) are there only when their section is.
TABLE_KEYS = (*ORDER["md"], "design", "acceptable_sets", "gold", "steps", "steps_by_kind", "step_judges", *POINTWISE_KEYS, *ORDERING_KEYS)
ABSENT_BECAUSE = (
    {
        "design": "the campaign is not actively sampled",
        "acceptable_sets": "the campaign does not ask for sets",
        "gold": "the campaign has no known-answer pairs",
        "steps": "the campaign does not show the agents' steps",
        "steps_by_kind": "the campaign does not show the agents' steps",
        "step_judges": "the campaign does not show the agents' steps",
    }
    | {key: "the campaign has no answers about one article" for key in POINTWISE_KEYS}
    | {key: "the campaign's rubric asks no rankings" for key in ORDERING_KEYS}
)


@dataclass(frozen=True)
class Heading:
    """The lines above the tables, as plain strings."""

    generated: str
    convention: str
    frontier: str
    ensembles: str | None
    human_reference: str | None = None


def heading(report: dict) -> Heading:
    c, p = report["campaign"], report["parameters"]
    generated = (
        f"Generated {report['generated_at']} · schema {report['schema']} v{report['version']} · {report['n_pairs']:,} pairs · "
        f"criteria {c['criterion_set']} · pair mode {c['pair_mode']} · systems: {', '.join(c['systems']) or DASH} · "
        f"scores: {p['anchor']['text']} · {p['rounds']:,} bootstrap rounds (seed {p['seed']}) · "
        + ("all assignments" if p["include_unsubmitted"] else "submitted assignments only")
    )
    convention = (
        f"Convention ({p.get('swap_policy', 'tie')}, unparsable {p.get('unparsable', 'drop')}): {p.get('convention', '')}. "
        f"Majority vote (--majority-ties {p.get('majority_ties', 'drop')}): {p.get('majority_rule') or 'ties dropped'}. "
        f"Intervals: {p.get('interval_rule', '')}; {p['confidence_level']:.0%} confidence, bootstrap over whole {p['bootstrap_unit']}s."
    )
    unknown = report.get("cost_unknown", [])
    frontier = f"Pareto frontier (PAR against cost per pair): {', '.join(report['pareto_frontier']) or DASH}" + (
        f" · cost unknown, so not placed: {', '.join(unknown)}" if unknown else ""
    )
    ensembles = None
    if p["ensembles"]:
        ensembles = (
            f"Ensemble judges (majority vote of their members; {p['ensemble_tie_rule']}; cost = the sum of the members' costs): "
            + ", ".join(p["ensembles"])
        )
    return Heading(generated, convention, frontier, ensembles, reference_line(report))
