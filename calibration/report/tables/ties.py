"""Display tables of the report's consensus strata, tie figures and soft labels (issue 40):
`consensus`, `split_share`, `tie_accuracy`, `davidson`, `soft_labels`, `soft_label_items`."""

from __future__ import annotations

from calibration.report.table_format import DASH, Table, fmt_value, nested

STRATA = ("unanimous", "split", "single")


def _consensus(report: dict, note: str) -> dict[str, Table]:
    c = report.get("consensus")
    out = {}
    rows = []
    if c:
        entries = [("humans (every two annotators)", c["humans"], None)]
        entries += [(a["annotator"], a["strata"], None) for a in c["annotators"]]
        entries += [(j["judge"], j["strata"], j["note"]) for j in c["judges"]]
        for name, strata, remark in entries:
            rows.append([name] + [nested(strata[s]["par"]) for s in STRATA] + [nested(strata[s]["kappa"]) for s in STRATA] + [remark or ""])
    counts = "" if not c else ", ".join(f"{s} {c['n_items'][s]:,}" for s in STRATA)
    withheld = []
    if c and not c["intervals"]["judges"]:
        withheld.append("the judges' intervals are computed only with --category-intervals all at this many judges")
    if c and not c["intervals"]["annotators"]:
        withheld.append("the annotators' own intervals are computed for a panel only")
    out["consensus"] = Table(
        "consensus",
        "Agreement by consensus: unanimous, split and single-annotator items",
        ["Rater", "PAR unanimous", "PAR split", "PAR single", "κ unanimous", "κ split", "κ single", "Note"],
        rows,
        [False, True, True, True, True, True, True, False],
        (f"Items: {counts}. Rule: {c['rule']}. Note: {c['note_rule']}. " + ("; ".join(withheld) + ". " if withheld else "") + note)
        if c
        else "",
        "No human labels yet.",
    )
    out["split_share"] = Table(
        "split_share",
        "Share of split items per criterion",
        ["Criterion", "Split share (of items with 2+ annotators)"],
        [[criterion, nested(e)] for criterion, e in (c["split_share"] if c else {}).items()],
        [False, True],
        ("Split: the annotators of the item did not all give one verdict. " + note) if c else "",
        "No item has two annotators yet.",
    )
    return out


def _ties(report: dict, note: str) -> dict[str, Table]:
    t = report.get("tie_accuracy") or {"judges": [], "note": None}
    out = {}
    out["tie_accuracy"] = Table(
        "tie_accuracy",
        "Accuracy with ties, tie threshold calibrated (judges with confidences)",
        [
            "Judge",
            "ε (calibrated)",
            "Held out: accuracy with ties",
            "Held out: own verdicts",
            "Calibration split",
            "Predicted ties",
            "Human ties",
            "Note",
        ],
        [
            [
                j["judge"],
                fmt_value(j["epsilon"]),
                nested(j["held_out"]),
                nested(j["held_out_own_verdicts"]),
                nested(j["calibration"]),
                fmt_value(j["predicted_tie_share"]),
                fmt_value(j["human_tie_share"]),
                j["note"] or "",
            ]
            for j in t["judges"]
        ],
        [False, True, True, True, True, True, True, False],
        (f"Rule: {t['rule']}; {t['distribution_rule']}; split: {t['split_rule']}. Procedure: {t['citation']}. " + note)
        if t["judges"]
        else "",
        t.get("note") or "No judge gave confidences.",
    )
    d = report.get("davidson") or {"raters": {}, "rankings": {}}
    rows = []
    for name, fit in d["raters"].items():
        ranking = d["rankings"].get(name, {})
        for s in fit["scores"]:
            ci = "" if s["ci"] is None else f" [{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]"
            rows.append(
                [
                    name,
                    s["system"],
                    DASH if s["score"] is None else f"{s['score']:.1f}{ci}",
                    DASH if s["rank"] is None else str(s["rank"]),
                    str(ranking.get("half_wins", {}).get(s["system"]) or DASH),
                    fmt_value(fit["nu"]) + ("" if fit["nu_ci"] is None else f" [{fit['nu_ci'][0]:.3f}, {fit['nu_ci'][1]:.3f}]"),
                    "changed" if ranking.get("changed") else "",
                ]
            )
    changed = [name for name, r in d["rankings"].items() if r["changed"]]
    remarks = "; ".join(f"{name}: {fit['note']}" for name, fit in d["raters"].items() if fit.get("note"))
    dropped = "; ".join(
        f"{name}: {fit['rounds_dropped']:,} of {fit['rounds']:,} rounds left out"
        for name, fit in d["raters"].items()
        if fit["rounds_dropped"]
    )
    out["davidson"] = Table(
        "davidson",
        "Bradley–Terry with Davidson's tie parameter ν, beside today's ranks (ties as half wins)",
        ["Rater", "System", "Score (Davidson)", "Rank (Davidson)", "Rank (ties as half wins)", "ν", "Ranking"],
        rows,
        [False, False, True, True, True, True, False],
        (
            f"Model: {d.get('model', '')}; scores on the Bradley–Terry scale. "
            + (f"The ranking changes for: {', '.join(changed)}. " if changed else "No rater's ranking changes. ")
            + (f"{remarks}. " if remarks else "")
            + (f"Bootstrap rounds in which the group fell apart: {dropped}. " if dropped else "")
            + (d.get("note") or "")
        )
        if rows
        else "",
        "No rater compared two systems yet.",
    )
    return out


def _soft(report: dict, note: str) -> dict[str, Table]:
    s = report.get("soft_labels") or {"judges": [], "items": [], "note": None}
    out = {}
    out["soft_labels"] = Table(
        "soft_labels",
        "Judges against the annotators' distribution per item (total-variation distance)",
        ["Judge", "Mean TV (its confidences)", "Mean TV (its verdicts taken whole)"],
        [[j["judge"], nested(j["tv"]), nested(j["tv_whole_verdicts"])] for j in s["judges"]],
        [False, True, True],
        (f"Rule: {s['rule']}; {s['distribution_rule']}. Lower is closer. " + note) if s["judges"] else "",
        s.get("note") or "No judge gave confidences.",
    )
    out["soft_label_items"] = Table(
        "soft_label_items",
        "The annotators' distribution per item (soft labels)",
        ["Pair", "Criterion", "System 1", "System 2", "Annotators", "Share 1 wins", "Share 2 wins", "Share tie"],
        [
            [
                i["pair"],
                i["criterion"],
                i["system_1"],
                i["system_2"],
                str(i["n"]),
                fmt_value(i["share_1"]),
                fmt_value(i["share_2"]),
                fmt_value(i["share_tie"]),
            ]
            for i in s["items"]
        ],
        [False, False, False, False, True, True, True, True],
        "Systems 1 and 2 in name order; each annotator's first verdict on the item. The JSON's soft_labels.items has the counts too.",
        "No human labels yet.",
    )
    return out


def tie_tables(report: dict, note: str) -> dict[str, Table]:
    return {**_consensus(report, note), **_ties(report, note), **_soft(report, note)}
