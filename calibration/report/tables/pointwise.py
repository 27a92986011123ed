"""Display tables of the report's `pointwise` section (answers about one article alone), shared by the
Markdown, the HTML report and the dashboard like `calibration.report.display`. None for a report
without the section, so a pairwise report's tables are unchanged.

Long tables (one row per figure) because each response type has its own figures: a checklist's
kappas, a scale's weighted kappas and correlations, a count's errors, a list of classes' kappas
and its confusion against the human majority (`pointwise_confusion`).
"""

from __future__ import annotations

from dataclasses import replace

from calibration.metrics.pointwise_math import MAJORITY_SCORES
from calibration.metrics.pointwise_panel import LOW_COVERAGE
from calibration.report.table_format import DASH, SMALL_MARK, Table, fmt_estimate, fmt_value
from calibration.report.tables.alttest import omega, verdict

CEILING = "annotators (leave one out)"
KEYS = (
    "pointwise_judges",
    "pointwise_checklist",
    "pointwise_criteria",
    "pointwise_panels",
    "pointwise_alt_test",
    "pointwise_alt_test_criteria",
    "pointwise_alt_test_annotators",
    "pointwise_powered",
    "pointwise_confusion",
    "pointwise_cross",
)
NOMINAL = "nominal"
SHOWN_CLASSES = 6  # a nominal table's label names this many of its classes, then counts the rest
# A checklist's figures against the human majority: a table of their own (one column each), not rows of the long table.
CHECKLIST_FIGURES = MAJORITY_SCORES
CHECKLIST_HEADERS = ("Balanced accuracy", "Precision", "Recall", "F1", "φ", "Majority's yes rate")


def response_label(table: dict) -> str:
    """A table of the section in a few words: `checklist`, `rating 1-5`, `count`, `nominal (yes / partly / no)`."""
    scale = table["scale"]
    if table["response"] == NOMINAL:
        shown = " / ".join(scale[:SHOWN_CLASSES]) + (f" / … {len(scale) - SHOWN_CLASSES:,} more" if len(scale) > SHOWN_CLASSES else "")
        return f"nominal ({shown})"
    if scale:
        return f"rating {scale[0]}-{scale[1]}"
    return {"binary": "checklist"}.get(table["response"], table["response"])


_label = response_label


def _cell(entry: dict | None, unit: str = "article") -> str:
    """`0.61 [0.55, 0.66]† (n=120, 40 articles)`: the bootstrap's units named (articles, or topics)."""
    if entry is None or entry["value"] is None:
        return DASH
    text = fmt_estimate(entry["value"], entry["ci"], 3, entry.get("ci_note")) + (SMALL_MARK if entry["small_n"] else "")
    units = entry.get("n_pairs")
    return f"{text} (n={entry['n']:,})" if units is None else f"{text} (n={entry['n']:,}, {units:,} {unit}{'' if units == 1 else 's'})"


def _figure_rows(label: str, rater: str, figures: dict) -> list[list[str]]:
    return [[label, rater, name, _cell(entry)] for name, entry in figures.items() if name not in CHECKLIST_FIGURES]


def _checklist(section: dict) -> Table:
    rows = []
    for t in section["tables"]:
        if t["response"] != "binary":
            continue
        sources = [(CEILING, t["human_ceiling"]["figures"]), *((judge, j["figures"]["figures"]) for judge, j in t["judges"].items())]
        for rater, figures in sources:
            rows.append([rater, *(_cell(figures.get(name)) for name in CHECKLIST_FIGURES), _cell(figures.get("human_mean"))])
    headers = ["Rater", *CHECKLIST_HEADERS, "Humans' yes rate (every answer)"]
    note = (
        'Against the strict majority of the annotators of each item (an even split left out), "yes" the positive class: '
        "recall is the share of the majority's yes the rater says yes to, precision the share of the rater's yes the majority "
        "says yes to, φ the correlation of the two yes/no answers (Matthews). The majority's yes rate is on the same items; the "
        "humans' yes rate pools every human answer. n: items; articles: the bootstrap's units; 95% CIs. The ceiling row: each "
        "annotator against the majority of the others."
    )
    empty = "No checklist answers."
    return Table("pointwise_checklist", "One-article answers: checklist figures against the human majority", headers, rows, [False] + [True] * 7, note, empty)  # fmt: skip


def _judges(section: dict, note: str) -> tuple[Table, Table]:
    rows, per_criterion = [], []
    for t in section["tables"]:
        label = _label(t)
        rows += _figure_rows(label, CEILING, t["human_ceiling"]["figures"])
        reference = t.get("human_reference") or {}
        for judge, j in t["judges"].items():
            rows += _figure_rows(label, judge, j["figures"]["figures"])
            if reference.get("applied"):
                against = reference["judges"][judge]["figures"]
                rows += _figure_rows(label, f"{judge} against {reference['method']}", {k: against[k] for k in ("agreement", "kappa")})
            for criterion, figures in j["figures"]["by_criterion"].items():
                per_criterion += [[label, criterion, judge, name, _cell(e)] for name, e in figures.items() if name not in CHECKLIST_FIGURES]
        for criterion, figures in t["human_ceiling"]["by_criterion"].items():
            per_criterion += [[label, criterion, CEILING, name, _cell(e)] for name, e in figures.items() if name not in CHECKLIST_FIGURES]
    headers = ["Response", "Rater", "Figure", "Value [95% CI] (n, articles)"]
    judges = Table("pointwise_judges", "One-article answers: judges against the humans", headers, rows, [False, False, False, True], note)
    criteria = Table(
        "pointwise_criteria",
        "One-article answers: judges against the humans, per criterion",
        ["Response", "Criterion", "Rater", "Figure", "Value [95% CI] (n, articles)"],
        per_criterion,
        [False, False, False, False, True],
        note,
    )
    return judges, criteria


def _answers(name: str, entry: dict) -> str:
    text = f"{name} {entry['answers']:,} used, {entry['errors']:,} errors"
    if entry["reasons"]:
        ranked = sorted(entry["reasons"].items(), key=lambda item: (-item[1], item[0]))
        text += " (" + ", ".join(f"{n:,} '{reason}'" for reason, n in ranked[:3])
        text += f", {sum(n for _, n in ranked[3:]):,} other)" if len(ranked) > 3 else ")"
    return text


def _coverage(counts: dict) -> str:
    """` (on its 120 of 300 items, coverage 40%: under 50%, the figure describes a minority of the items)`."""
    if "coverage" not in counts:
        return ""
    text = f" (on its {counts['judge_items']:,} of {counts['human_items']:,} items, coverage {counts['coverage']:.0%}"
    if counts["coverage"] < LOW_COVERAGE:
        text += f": under {LOW_COVERAGE:.0%}, the figure describes a minority of the annotators' items"
    return text + ")"


def _panels(section: dict, note: str) -> Table:
    rows = []
    for t in section["tables"]:
        label = _label(t)
        rows += [[label, "annotators", name, _cell(e)] for name, e in t["human_panel"]["figures"].items()]
        for judge, j in t["judges"].items():
            panel = f"annotators + {judge}{_coverage(j['panel']['counts'])}"
            rows += [[label, panel, name, _cell(e)] for name, e in j["panel"]["figures"].items()]
    headers = ["Response", "Panel", "Figure", "Value [95% CI] (n items, articles)"]
    note = (
        note + " A panel figure with a judge, and its _change (with minus without the judge, on the same items), shows what the judge does "
        "to the humans' agreement; it is computed on the items the judge answered, their number and coverage beside it."
    )
    return Table("pointwise_panels", "One-article answers: agreement of the panel", headers, rows, [False, False, False, True], note)


def rho(result: dict) -> str:
    """ρ of an alt-test result as the metrics give it (an Estimate's fields), with its n and articles."""
    r = result.get("rho")
    if not r or r.get("value") is None:
        return DASH
    ci = None if r.get("ci_low") is None else (r["ci_low"], r["ci_high"])
    units = "" if r.get("n_pairs") is None else f", {r['n_pairs']:,} articles"
    return f"{fmt_estimate(r['value'], ci, 3)} (n={r['n']:,}{units})"


def _unit_words(section: dict) -> tuple[str, str]:
    """(what the pooled test counts, its sentence): the alt-test's pair is the article here."""
    for t in section["tables"]:
        for j in t["judges"].values():
            if j["alt_test"].get("unit") == "item":
                return "items", "unit: the item (article × criterion), each item its own unit (--alt-unit item)"
            if j["alt_test"].get("unit") == "pair":
                return "articles", "unit: the article, its criteria pooled (--alt-unit pair)"
    return "articles", "unit: the article"


def _pooled_label(entry: dict) -> str:
    if entry["scope"] == "all":
        return f"all one-article criteria, pooled ({', '.join(entry['pools'])})"
    kind = {"binary": "checklist"}.get(entry["scope"], entry["scope"])
    return f"{kind}, every scale pooled ({', '.join(entry['pools'])})"


def _alt_tests(section: dict):
    """(response label, judge, alt-test) for the pooled tests first (the headline), then each table's (the breakdown)."""
    for entry in section.get("alt_test_pooled", []):
        for judge, alt in entry["judges"].items():
            yield _pooled_label(entry), judge, alt
    for t in section["tables"]:
        for judge, j in t["judges"].items():
            yield _label(t), judge, j["alt_test"]


def _alt_test(section: dict) -> dict[str, Table]:
    rows, crit_rows, ann_rows = [], [], []
    counted, unit_sentence = _unit_words(section)
    for label, judge, alt in _alt_tests(section):
        if alt["note"]:
            rows.append([label, judge, alt["scoring"], alt["note"], DASH, DASH, DASH])
            continue
        per = alt["by_criterion"]
        rows.append([label, judge, alt["scoring"], verdict(alt), omega(alt), rho(alt), f"passes on {per['n_passed']} of {per['n_criteria']} criteria"])  # fmt: skip
        for c in per["results"]:
            crit_rows.append([label, judge, c["criterion"], verdict(c), omega(c), rho(c)])
        for a in alt.get("annotators", []):
            ann_rows.append([
                label, judge, a["annotator"], f"{a['n']:,}", fmt_value(a["mean_wf"]), fmt_estimate(a["mean_diff"], a["diff_ci"]),
                fmt_value(a["p"], 4), fmt_value(a["p_adjusted"], 4), "yes" if a["rejected"] else "no",
            ])  # fmt: skip
    scoring = "Scoring: categorical (accuracy) for checklists and classes, numeric (negative RMSE) for ratings and counts"
    if section.get("alt_test_pooled"):
        scoring += (
            "; the pooled rows come first (the headline): one test over the criteria of several response types or scales, each "
            "item scored its own way (a comparison is within one item, so no common scale is needed); the rows of one response "
            "type and scale follow as the breakdown"
        )
    note = f"{scoring}; {unit_sentence}. ρ's CI: bootstrap over articles."
    return {
        "pointwise_alt_test": Table(
            "pointwise_alt_test", "One-article answers: alternative annotator test",
            ["Response", "Judge", "Scoring", "Verdict", "ω (winning rate)", "ρ (advantage probability)", "Per criterion"],
            rows, [False, False, False, False, True, True, False], note,
        ),
        "pointwise_alt_test_criteria": Table(
            "pointwise_alt_test_criteria", "One-article answers: alt-test per criterion",
            ["Response", "Judge", "Criterion", "Verdict", "ω", "ρ"], crit_rows, [False, False, False, False, True, True],
            f"{scoring}. Each criterion alone, its items its units; one Benjamini–Yekutieli correction across every criterion × annotator test.",
            "No alt-test: ε not set.",
        ),
        "pointwise_alt_test_annotators": Table(
            "pointwise_alt_test_annotators", "One-article answers: alt-test per annotator (pooled)",
            ["Response", "Judge", "Annotator left out", counted.capitalize(), "mean W_f", "mean(W_h − W_f) [95% t-CI]", "p", "p (BY)", "Beaten"],
            ann_rows, [False, False, False, True, True, True, True, True, False],
            f"{scoring}; {unit_sentence}. Beaten: H0 mean(W_h − W_f) ≥ ε rejected after the Benjamini–Yekutieli correction.",
            "No alt-test: ε not set.",
        ),
    }  # fmt: skip


def _interval(entry: dict) -> str:
    units = entry["n_pairs"]
    return f"{fmt_estimate(entry['value'], entry['ci'])} (n={entry['n']:,}, {units:,} article{'' if units == 1 else 's'})"


def _powered_rows(label: str, judge: str, found: dict, what: str = "") -> list[list[str]]:
    rows = []
    for system, m in found["systems"].items():
        lam = DASH if m["lam"] is None else f"{m['lam']:.2f}"
        rows.append([label, judge, system + what, _interval(m["ppi"]), _interval(m["human"]), _interval(m["judge"]), lam])
    for system, why in found["left_out"].items():
        rows.append([label, judge, system + what, why, DASH, DASH, DASH])
    return rows


def _powered(section: dict) -> Table:
    rows = []
    for t in section["tables"]:
        for judge, j in t["judges"].items():
            found = j["powered_means"]
            rows += _powered_rows(_label(t), judge, found)
            for name, share in found.get("classes", {}).items():
                rows += _powered_rows(_label(t), judge, share, f": share of {name}")
    headers = ["Response", "Judge", "System", "Prediction-powered mean", "Humans only", "Judge only", "λ"]
    note = (
        "Each system's mean answer (a checklist: the yes rate; a list of classes: the share of answers in each class) as the "
        "humans would give it, the judge's answers as predictions (PPI++); n: items (article × criterion), then articles. "
        "Assumes the articles the humans answered are a random sample."
    )
    return Table("pointwise_powered", "One-article answers: prediction-powered mean per system", headers, rows, [False, False, False, True, True, True, True], note)  # fmt: skip


def _confusion(section: dict) -> Table:
    rows = []
    for t in section["tables"]:
        if t["response"] != NOMINAL:
            continue
        classes = t["scale"]
        sources = [(CEILING, t["human_ceiling"]), *((judge, j["figures"]) for judge, j in t["judges"].items())]
        for rater, figures in sources:
            matrix = figures.get("confusion") or []
            for majority, name in enumerate(classes):
                column = [row[majority] for row in matrix]
                total = sum(column)
                if not total:
                    continue
                given = ", ".join(f"{classes[k]} {n:,}" for k, n in enumerate(column) if n)
                rows.append([_label(t), rater, name, f"{total:,}", f"{column[majority] / total:.3f}", given])
    headers = ["Response", "Rater", "Majority's class", "Items", "Rater agrees", "Rater's answers"]
    note = (
        "Against the strict majority of the annotators of each item (items whose two most chosen classes tie are left out): per "
        "class the majority chose, how many items, the share where the rater gave the same class, and what the rater answered. "
        "The ceiling row: each annotator against the majority of the others. A not-applicable answer the rubric makes a class "
        "is one of the classes; one it skips is in no row."
    )
    return Table("pointwise_confusion", "One-article answers: classes against the human majority", headers, rows, [False, False, False, True, True, False], note, "No nominal answers.")  # fmt: skip


def _cross(section: dict) -> Table:
    rows, statement = [], ""
    for t in section["tables"]:
        cross = t["cross_protocol"]
        if cross is None:
            continue
        statement = cross["statement"]
        for source, result in (("humans", cross["humans"]), *cross["judges"].items()):
            hit, decisive = result["figures"].get("hit_rate"), result["figures"].get("hit_rate_decisive")
            counts = result["counts"]
            pooled = [_cell(hit, "topic"), _cell(decisive, "topic"), f"{counts['verdicts']:,}", f"{counts['no_pointwise']:,}"]
            rows.append([_label(t), "all", source, *pooled])
            for criterion, figures in result["by_criterion"].items():
                cells = [_cell(figures.get("hit_rate"), "topic"), _cell(figures.get("hit_rate_decisive"), "topic"), "", ""]
                rows.append([_label(t), criterion, source, *cells])
    headers = [
        "Response",
        "Criterion",
        "Source",
        "Predicts the verdict [95% CI]",
        "Decisive only [95% CI]",
        "Verdicts",
        "Without pointwise",
    ]
    numeric = [False, False, False, True, True, True, True]
    empty = "No pairwise verdicts on the same articles and criteria."
    return Table("pointwise_cross", "Cross-protocol: does the pointwise difference predict the pairwise winner?", headers, rows, numeric, statement, empty)  # fmt: skip


def pointwise_tables(report: dict) -> dict[str, Table]:
    """The section's tables; {} for a report without it."""
    section = report.get("pointwise")
    if section is None:
        return {}
    note = (
        f"{section['statement']} n: comparisons (answer pairs, or items for mean-based figures); articles: the bootstrap's "
        f"units ({section['rounds']:,} rounds). Against the human majority (agreement_majority, kappa_majority, the checklist "
        "figures): each item's strict majority, an even split left out (ties dropped, whatever --majority-ties says of pairwise verdicts)."
    )
    judges, criteria = _judges(section, note)
    answers = section.get("judge_answers") or {}
    if answers:
        listed = "; ".join(_answers(name, entry) for name, entry in answers.items())
        judges = replace(judges, note=f"{judges.note} Judges' answers used, and those given as errors (in no figure): {listed}.")
    return {
        "pointwise_judges": judges,
        "pointwise_checklist": _checklist(section),
        "pointwise_criteria": criteria,
        "pointwise_panels": _panels(section, note),
        **_alt_test(section),
        "pointwise_powered": _powered(section),
        "pointwise_confusion": _confusion(section),
        "pointwise_cross": _cross(section),
    }
