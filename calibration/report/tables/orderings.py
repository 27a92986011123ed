"""Display tables of the report's `orderings` section (rankings of k articles), shared by the Markdown,
the HTML report and the dashboard like `calibration.report.display`. {} for a report without the
section, so every other report's tables are unchanged."""

from __future__ import annotations

from calibration.report.table_format import DASH, SMALL_MARK, Table, fmt_estimate

KEYS = ("orderings_judges", "orderings_panel", "orderings_systems")
CEILING = "annotators (leave one out)"


def _cell(entry: dict | None, what: str = "value") -> str:
    """`0.61 [0.55, 0.66]† (n=120, 40 items)`."""
    if entry is None or entry[what] is None:
        return DASH
    text = fmt_estimate(entry[what], entry["ci"], 3, entry.get("ci_note")) + (SMALL_MARK if entry["small_n"] else "")
    items = entry.get("n_pairs")
    return f"{text} (n={entry['n']:,})" if items is None else f"{text} (n={entry['n']:,}, {items:,} item{'' if items == 1 else 's'})"


def _judges(section: dict, note: str) -> Table:
    headers = ["Criterion", "Rater", "Kendall's τ-b vs the humans' mean ranks", "Pairs ordered as the humans order them",
               "Against the ceiling (95% CIs)", "Pairs the humans tie (left out)"]  # fmt: skip
    rows = []
    for c in section["criteria"]:
        rows.append([c["criterion"], CEILING, _cell(c["ceiling"]), DASH, DASH, DASH])
        for name, j in c["judges"].items():
            reach = {"yes": "not shown below it (CIs overlap)", "no": "below it"}.get(j["within_ceiling"], DASH)
            rows.append(
                [c["criterion"], name, _cell(j["tau_mean_rank"]), _cell(j["pairs_ordered_alike"]), reach, f"{j['n_pairs_humans_tied']:,}"]
            )
    errors = section.get("judge_errors") or {}
    if errors:
        listed = "; ".join(f"{name}: {e['errors']:,} units in error ({', '.join(f'{r} ×{n}' for r, n in e['reasons'].items())})"
                           for name, e in errors.items())  # fmt: skip
        note = f"{note} Judges' units given as errors, in no figure: {listed}."
    return Table("orderings_judges", "Rankings: judges against the humans' mean ranks", headers, rows, [False, False, True, True, False, True], note, "No rankings.")  # fmt: skip


def _panel(section: dict, note: str) -> Table:
    headers = ["Criterion", "Articles", "Ties allowed", "Items", "Human orderings", "Annotators", "Kendall's W among annotators"]
    rows = [
        [c["criterion"], str(c["articles"]), "yes" if c["ties_allowed"] else "no", f"{c['n_items']:,}", f"{c['n_orderings']:,}",
         f"{len(c['annotators']):,}", _cell(c["kendalls_w"])]
        for c in section["criteria"]
    ]  # fmt: skip
    return Table("orderings_panel", "Rankings: agreement among the annotators", headers, rows, [False, True, False, True, True, True, True], note, "No rankings.")  # fmt: skip


def _systems(section: dict, note: str) -> Table:
    headers = ["Criterion", "System", "Plackett-Luce strength (log scale, mean 0)", "Orderings fitted", "Tied orderings (left out)"]
    rows = []
    for c in section["criteria"]:
        fit = c["plackett_luce"]
        ranked = sorted(fit["systems"].items(), key=lambda kv: -(kv[1]["strength"] if kv[1]["strength"] is not None else float("-inf")))
        rows += [
            [c["criterion"], system, _cell(value, "strength"), f"{fit['n_orderings']:,}", f"{fit['n_skipped_tied']:,}"]
            for system, value in ranked
        ]
    return Table("orderings_systems", "Rankings: the systems' Plackett-Luce strengths (humans)", headers, rows, [False, False, True, True, True], note, "No rankings.")  # fmt: skip


def ordering_tables(report: dict) -> dict[str, Table]:
    """The section's tables; {} for a report without it."""
    section = report.get("orderings")
    if section is None:
        return {}
    note = f"{section['statement']} n: orderings, or items for the means; items: the bootstrap's units. {SMALL_MARK}: few items."
    return {
        "orderings_judges": _judges(section, note),
        "orderings_panel": _panel(section, note),
        "orderings_systems": _systems(section, note),
    }
