"""The dashboard's summary at the top (issue 41, item 7): the human ceiling, the best judges held
against it, what the judges cost, and the warnings, read from a report's JSON (no Django).

Conventions, stated on the page beside the figures: PAR and the ceiling are shares of labels in
agreement with the humans (the ceiling: each annotator against the others, leave-one-out), 95%
pair-bootstrap CIs; a judge "reaches" the ceiling when its PAR is at or above it, "overlaps" when the
two CIs overlap, else it is "below". Baselines are never among the best judges. Costs are USD.
"""

from __future__ import annotations

BASELINE_KINDS = ("length", "words-to-watch", "random")  # as calibration.report.build.BASELINE_KINDS
BEST_SHOWN = 3


def _ci(fields: dict, name: str) -> tuple[float, float] | None:
    ci = fields.get(f"{name}_ci")
    return (ci[0], ci[1]) if ci and ci[0] is not None and ci[1] is not None else None


def _against(par: float, par_ci, ceiling: float | None, ceiling_ci) -> str | None:
    if ceiling is None:
        return None
    if par >= ceiling:
        return "reaches"
    if par_ci and ceiling_ci and par_ci[1] >= ceiling_ci[0]:
        return "overlaps"
    return "below"


def dashboard_summary(report: dict) -> dict:
    """{ceiling, best, cost, warnings, recommendation} for the dashboard's summary card."""
    humans = report.get("humans") or {}
    value = humans.get("par_leave_one_out")
    ceiling = {
        "value": value,
        "ci": _ci(humans, "par_leave_one_out"),
        "n": humans.get("par_leave_one_out_n") or 0,
        "n_annotators": humans.get("n_annotators") or 0,
        "note": humans.get("par_leave_one_out_ci_note"),
    }
    judges = [j for j in report.get("judges") or [] if j.get("par") is not None and j.get("kind") not in BASELINE_KINDS]
    judges.sort(key=lambda j: (-j["par"], j["name"]))
    best = [
        {
            "name": j["name"],
            "par": j["par"],
            "ci": _ci(j, "par"),
            "n": j.get("n_labels") or 0,
            "kappa": j.get("cohen_kappa"),
            "cost_per_pair_usd": j.get("cost_per_pair_usd"),
            "against": _against(j["par"], _ci(j, "par"), value, ceiling["ci"]),
            "difference": None if value is None else round(j["par"] - value, 3),
        }
        for j in judges[:BEST_SHOWN]
    ]
    # Ensembles (members set) cost the sum of their members': counting them again would double the spend.
    spenders = [j for j in report.get("judges") or [] if not j.get("members")]
    known = [j["cost_usd"] for j in spenders if j.get("cost_usd") is not None]
    cost = {
        "total_usd": round(sum(known), 6) if known else None,
        "judges_priced": len(known),
        "judges_unpriced": [j["name"] for j in spenders if j.get("cost_usd") is None and j.get("kind") not in BASELINE_KINDS],
    }
    warnings = list(report.get("notes") or [])
    if value is None:
        warnings.append("No human ceiling: it needs items labelled by at least two annotators.")
    elif ceiling["ci"] is None and ceiling["note"]:
        warnings.append(f"The human ceiling has no interval: {ceiling['note']}.")
    plan = report.get("plan") or {}
    deviations = plan.get("deviations") or []
    if plan.get("frozen") and deviations:
        shown = "; ".join(d["what"] for d in deviations[:3])
        more = f" and {len(deviations) - 3} more" if len(deviations) > 3 else ""
        warnings.append(f"{len(deviations)} deviation{'s' if len(deviations) != 1 else ''} from the frozen study plan: {shown}{more}.")
    if plan.get("altered"):
        warnings.append("The stored study plan no longer matches the hash frozen with it.")
    return {
        "ceiling": ceiling,
        "best": best,
        "n_judges": len(judges),
        "cost": cost,
        "warnings": warnings,
        "recommendation": report.get("recommendation"),
    }


# The dashboard's sections, in order: (key, title, open at first, items). An item is a table key, a
# chart ("chart:<name>", with its caption), or the note on the per-category intervals. Tables a report
# lacks are left out, and so is a section left empty.
CHARTS = {
    "par_cost": (
        "PAR against cost",
        "whiskers: 95% CI; dashed: Pareto frontier; band: humans' leave-one-out PAR; right-hand strip: judges whose cost is unknown.",
    ),
    "heatmap": ("PAR per category", "† resting on fewer than 30 pairs."),
    "bradley_terry": ("Bradley–Terry leaderboard", "whiskers: 95% CI."),
}
SECTIONS = (
    ("judges", "Judges against the humans", True, ("design", "judges", "acceptable_sets", "chart:par_cost", "judge_work")),
    ("humans", "The humans and the alt-test", True, ("humans", "alt_test", "alt_test_criteria", "alt_test_annotators")),
    (
        "raters",
        "Annotators' competence and position",
        False,
        ("sensitivity", "competence", "human_position", "annotator_pairs", "annotators", "gold"),
    ),
    ("steps", "Votes on the agents' steps", False, ("steps", "steps_by_kind", "step_judges")),
    ("blinding", "Blinding", False, ("blinding", "verdicts_by_guess", "style_control")),
    ("agreement", "Judges compared with each other", False, ("comparisons", "judge_pairs", "judge_pairs_list", "human_likeness")),
    ("consensus", "Agreement by human consensus", False, ("consensus", "split_share")),
    ("ties", "Ties and soft labels", False, ("tie_accuracy", "davidson", "soft_labels", "soft_label_items")),
    ("categories", "By category and criterion", False, ("categories", "chart:heatmap", "criteria")),
    (
        "rankings",
        "Rankings of the systems",
        False,
        (
            "chart:bradley_terry",
            "kendall_tau",
            "bradley_terry",
            "bradley_terry_meta",
            "bradley_terry_by_category",
            "note:category_intervals",
        ),
    ),
    ("powered", "Win rates and prediction-powered estimates", False, ("win_rates", "ppi_win_rates", "ppi_bradley_terry", "ppi_judges")),
    (
        "one_article",
        "One-article protocols",
        True,
        (
            "pointwise_judges",
            "pointwise_criteria",
            "pointwise_panels",
            "pointwise_alt_test",
            "pointwise_powered",
            "pointwise_confusion",
            "pointwise_cross",
        ),
    ),
)


def dashboard_sections(pages: dict, charts: dict, *, pointwise: bool, category_note: bool) -> list[dict]:
    """The sections with what each holds: {key, title, open, items: [{kind, ...}]}; `pages` maps a table key to its first page."""
    out = []
    for key, title, is_open, names in SECTIONS:
        if key == "one_article" and not pointwise:
            continue
        items = []
        for name in names:
            if name.startswith("chart:"):
                chart = name.removeprefix("chart:")
                if charts.get(chart):
                    caption, rule = CHARTS[chart]
                    items.append({"kind": "chart", "key": chart, "title": caption, "rule": rule, "svg": charts[chart]})
            elif name == "note:category_intervals":
                if category_note:
                    items.append({"kind": "note", "key": "category-intervals"})
            elif pages.get(name) is not None:
                page = pages[name]
                items.append({"kind": "table", "key": name, "title": page.table.title, "page": page})
        if items:
            out.append({"key": key, "title": title, "open": is_open, "items": items})
    return out
