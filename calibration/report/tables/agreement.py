"""Display tables of the report's agreement among raters and of its prediction-powered estimates
(the rest are in `calibration.report.display`)."""

from __future__ import annotations

from calibration.report.table_format import DASH, Table, fmt_estimate, fmt_n, fmt_spread, fmt_value, nested

# Up to this many judges the "Judges against each other" matrix is shown; the list has every two judges.
MATRIX_JUDGES = 20


def agreement_tables(report: dict, note: str) -> dict[str, Table]:
    """Annotators against each other and against the others' majority; judges against each other."""
    h = report["humans"]
    out: dict[str, Table] = {}
    out["annotator_pairs"] = Table(
        "annotator_pairs",
        "Annotators against each other (Cohen's κ for every two)",
        ["Annotator A", "Annotator B", "Cohen's κ", "Raw agreement"],
        [[p["a"], p["b"], nested(p["kappa"]), nested(p["agreement"])] for p in h["annotator_pairs"]],
        [False, False, True, True],
        "Items both rated; κ categories: the first of the pair's systems by name wins, the second wins, a tie. " + note,
    )
    out["annotators"] = Table(
        "annotators",
        "Each annotator",
        [
            "Annotator",
            "Labels",
            "Pairs",
            "Agreement with the others' majority (ties dropped)",
            "Outlier",
            "Time per pair",
            "Time per criterion",
        ],
        [
            [
                a["name"],
                f"{a['n_labels']:,}",
                f"{a['n_pairs']:,}",
                nested(a["agreement_with_others"]),
                "yes" if a["outlier"] else "",
                fmt_spread(a["seconds_per_pair"]),
                fmt_spread(a["seconds_per_criterion"]),
            ]
            for a in h["annotators"]
        ],
        [False, True, True, True, False, True, True],
        f"Outlier: {h['outlier_rule']}. Times: {h['time_rule']}; median (quartiles, pairs timed). " + note,
    )
    judges = [j["name"] for j in report["judges"] if not j.get("members")]
    cells = {}
    for p in report["judge_pairs"]:
        text = f"{fmt_value(p['agreement']['value'])} (κ {fmt_value(p['kappa']['value'])}, n={p['agreement']['n']:,})"
        cells[(p["a"], p["b"])] = cells[(p["b"], p["a"])] = text
    listed = [n for n in judges if any(n in key for key in cells)]
    if len(listed) > MATRIX_JUDGES:
        listed = []  # too wide to read: the list below has every two judges
    out["judge_pairs"] = Table(
        "judge_pairs",
        "Judges against each other",
        ["Judge"] + listed,
        [[a] + ["1" if a == b else cells.get((a, b), DASH) for b in listed] for a in listed],
        [False] + [True] * len(listed),
        "Share of items two judges give the same verdict (swapped runs merged), Cohen's κ and the items both judged; "
        f"the CIs are in the list below. With more than {MATRIX_JUDGES} judges, only the list is shown.",
    )
    out["judge_pairs_list"] = Table(
        "judge_pairs_list",
        "Judges against each other, with CIs",
        ["Judge A", "Judge B", "Cohen's κ", "Raw agreement"],
        [[p["a"], p["b"], nested(p["kappa"]), nested(p["agreement"])] for p in report["judge_pairs"]],
        [False, False, True, True],
        "Items both judged (swapped runs merged). " + note,
    )
    likeness = report.get("human_likeness") or {"judges": [], "rule": "", "n_annotators": 0, "n_annotator_pairs": 0}
    spread = (
        f"annotators' κ with each other: mean {fmt_value(likeness.get('human_kappa_mean'))}, SD {fmt_value(likeness.get('human_kappa_sd'))} "
        f"over {likeness['n_annotator_pairs']} annotator pair{'s' if likeness['n_annotator_pairs'] != 1 else ''} "
        f"({likeness['n_annotators']} annotators)"
    )
    out["human_likeness"] = Table(
        "human_likeness",
        "Human-likeness: each judge's κ with the annotators against theirs with each other",
        ["Judge", "Mean κ with the annotators", "z", "Class", "κ with each annotator"],
        [
            [
                j["judge"],
                fmt_value(j["mean_kappa"]),
                nested(j["z"]),
                j["class"] or (j["note"] or DASH),
                "; ".join(f"{name}: {fmt_value(e['value'])}" for name, e in j["kappas"].items()) or DASH,
            ]
            for j in likeness["judges"]
        ],
        [False, True, True, False, False],
        f"Rule: {likeness['rule']}. The spread: {spread}. " + note if likeness["judges"] else "",
        "No judge shares items with the annotators yet.",
    )
    return out


def _ranks(entry: dict) -> str:
    lo, hi = entry["rank_set"]
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _method(e: dict, key: str, digits: int) -> str:
    text = fmt_estimate(e[key], e["ci"], digits, e.get("ci_note"))
    return text if text == DASH else f"{text} {fmt_n(e['n'], e.get('n_pairs'))}"


def powered_tables(report: dict) -> dict[str, Table]:
    """Prediction-powered win rates and scores, next to the humans' and the judge's own, and what each judge adds."""
    section = report.get("prediction_powered") or {"judges": {}}
    reference = report["parameters"]["reference"]
    rate_rows, score_rows, judge_rows = [], [], []
    for judge, figures in section["judges"].items():
        if figures["note"] and not figures["win_rates"]:
            rate_rows.append([judge, DASH, f"{judge}: {figures['note']}", DASH, DASH, DASH, DASH])
        for system, reason in (figures.get("win_rates_left_out") or {}).items():
            rate_rows.append([judge, system, reason, DASH, DASH, DASH, DASH])
        for system, r in figures["win_rates"].items():
            rate_rows.append(
                [
                    judge,
                    system,
                    *(_method(r[m], "rate", 3) for m in ("ppi", "human", "judge")),
                    fmt_value(r["lam"], 2),
                    DASH if r["n_effective"] is None else f"{r['n_effective']:,.0f}",
                ]
            )
        bt = figures["bradley_terry"] or {"scores": [], "left_out": {}}
        for row in bt["scores"]:
            cells = []
            for m in ("ppi", "human", "judge"):
                e = row[m]
                cells.append(DASH if e is None else f"{_method(e, 'score', 0)} · rank {_ranks(e)}")
            score_rows.append([judge, row["system"], *cells])
        for system, reason in bt["left_out"].items():
            score_rows.append([judge, system, reason, DASH, DASH])
        judge_rows.append(
            [
                judge,
                f"{figures['n_human']:,} ({figures['n_human_pairs']:,} pairs)",
                f"{figures['n_judge']:,}",
                f"{figures['n_unlabelled']:,} ({figures['n_unlabelled_pairs']:,} pairs)",
                DASH if figures.get("gain") is None else f"×{figures['gain']:.2f}",
                DASH if figures.get("n_effective") is None else f"{figures['n_effective']:,.0f}",
                figures["note"] or "",
            ]
        )
    against = f"against {reference}" if reference else "against the field"
    worth = "; ".join(
        f"{judge}: {f['n_human']:,} human labels worth {f['n_effective']:,.0f} (gain ×{f['gain']:.2f})"
        for judge, f in section["judges"].items()
        if f["n_effective"] is not None
    )
    common = f"{section.get('method', '')} {section.get('assumption', '')}".strip()
    return {
        "ppi_win_rates": Table(
            "ppi_win_rates",
            f"Prediction-powered win rates {against}",
            ["Judge", "System", "Prediction-powered", "Humans only", "Judge only", "λ", "Worth (human labels)"],
            rate_rows,
            [False, False, True, True, True, True, True],
            " ".join(x for x in (common, worth + "." if worth else "") if x),
        ),
        "ppi_bradley_terry": Table(
            "ppi_bradley_terry",
            "Prediction-powered Bradley–Terry scores and rank-sets",
            ["Judge", "System", "Prediction-powered", "Humans only", "Judge only"],
            score_rows,
            [False, False, True, True, True],
            f"Elo-like scale; {f'{reference} = 1000' if reference else 'the mean of the systems scored here is 1000'}; normal 95% CIs; "
            "a system that never wins or never loses in the human labels or the judge's verdicts is left out of all three. "
            + section.get("rank_set_rule", ""),
        ),
        "ppi_judges": Table(
            "ppi_judges",
            "Prediction-powered: what each judge's verdicts add",
            ["Judge", "Labelled items", "Judged items", "Unlabelled items", "Gain", "Worth (human labels)", "Note"],
            judge_rows,
            [False, True, True, True, True, True, False],
            "Labelled: items with a human label and this judge's verdict; unlabelled: items judged in pairs no human labelled. "
            "Gain: median over systems of the human-only variance over the prediction-powered one; worth: labelled items × gain.",
        ),
    }
