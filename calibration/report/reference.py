"""Which humans are the reference? The report's `human_reference`, `competence` and `sensitivity`
sections (issue 26 item 4).

Every judge statistic assumes the humans are right. The reference they are computed against is
chosen (`--human-reference`, `?human_reference=`) among :data:`REFERENCES`: the human labels as
they are (`majority`, the default and the report as it always was), one label per item from
Dawid-Skene or MACE (`calibration.metrics.competence`), the labels without those of the
annotators the flag rule (:data:`FLAG_RULE`) marks, or the adjudicators' final answers on the
items they decided and the human labels elsewhere (`adjudicated`; issue 26 item 5). Whatever the choice, the `competence` section
gives each annotator's competence under both models and the `sensitivity` section how each judge's
PAR, κ and alt-test verdict move under every reference (`calibration.metrics.sensitivity`).
Field by field in docs/calibration-report.md.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from calibration import cache as report_cache
from calibration import metrics as M
from calibration.metrics import alttest
from calibration.metrics.competence import Aggregate, dawid_skene, mace
from calibration.metrics.labels import align_tables
from calibration.metrics.quality import flagged_raters, human_position
from calibration.metrics.sensitivity import reference_sensitivity, standard_references
from calibration.report.alttest import SCORING, human_ratings, judge_ratings
from calibration.report.sections import display, estimate, rounded

REFERENCES = ("majority", "dawid-skene", "mace", "exclude-flagged", "adjudicated")
ADJUDICATED = "adjudicated"
DEFAULT_REFERENCE = "majority"
# Each round of the competence bootstrap refits an EM (MACE: ~0.2 s CPU a round on 100,000 labels), so
# the rounds are capped: at most 200, and at most COMPETENCE_CELLS / labels, but never fewer than 50.
COMPETENCE_ROUNDS = 200
COMPETENCE_MIN_ROUNDS = 50
COMPETENCE_CELLS = 5_000_000
MIN_MACE_COMPETENCE = 0.5
POSITION_MARGIN = 0.1
FLAG_RULE = (
    f"an annotator is flagged when MACE's competence (the probability that they know the answer rather than guess) has its whole "
    f"95% CI below {MIN_MACE_COMPETENCE:g}, or when their first-position rate (answers that pick the article shown first, ties "
    f"left out) has its whole 95% CI beyond 0.5 ± {POSITION_MARGIN:g}; speed, rationale and gold-pair flags are for staff on "
    "their own pages and do not enter this rule (gold pairs are left out of the report)"
)
TIE_HANDLING = (
    "Dawid-Skene and MACE treat a tie as a third class, never dropped: each model learns how often an annotator answers tie "
    "whatever the truth, and an item's aggregated label may be a tie (only the classes someone used are modelled). An "
    "annotator's first answer on an item counts; a swapped repeat is a position check, not a second vote. An item whose two "
    "most probable classes are within 1e-9 of each other is unresolved: it has no aggregated label and is left out of that "
    "reference, as items without a strict majority are left out of the majority."
)
MEANING = {
    "majority": "the human labels as they are (agreement with the humans and κ against the strict majority of each item), the report as before",
    "dawid-skene": "one Dawid-Skene label per item (the class with the highest posterior); unresolved items left out",
    "mace": "one MACE label per item (the class with the highest posterior); unresolved items left out",
    "exclude-flagged": "the human labels without those of the flagged annotators (flag_rule)",
    ADJUDICATED: (
        "the adjudicator's final answer on each adjudicated item (the annotators' labels of that item set aside), the human labels "
        "as they are on every other item"
    ),
}
SCOPE = (
    "the chosen reference stands for the humans in every judge statistic (judges, comparisons, Pareto frontier, "
    "recommendation, alt_test, prediction_powered); the humans section, the humans' Bradley-Terry scores and win rates "
    "and the annotator tables describe the annotators' own labels whatever the reference"
)


# The annotator models are fitted only when asked: their bootstraps cost several times the rest of the report.
NOT_COMPUTED = (
    "not computed: ask with --sensitivity (or ?sensitivity=1); it fits Dawid–Skene and MACE with a bootstrap, "
    "about 14 s of CPU on 100k labels"
)


def adjudicated_counts(adjudicated: M.LabelTable | None) -> dict:
    """How many items (a pair and a criterion) were adjudicated, on how many pairs."""
    if adjudicated is None or not len(adjudicated):
        return {"n_items": 0, "n_pairs": 0}
    return {"n_items": int(np.unique(adjudicated.item).size), "n_pairs": int(np.unique(adjudicated.pair).size)}


def adjudicated_counts_of(adjudicated: M.LabelTable | None) -> dict | None:
    """`adjudicated_counts`, None when the adjudicated answers were not read."""
    return None if adjudicated is None else adjudicated_counts(adjudicated)


def adjudicated_used(chosen: str, adjudicated: M.LabelTable | None) -> M.LabelTable | None:
    """The adjudicated answers the references take: always when `adjudicated` is chosen (none yet: an
    empty table, so the reference is the humans as they are), else only when some item was adjudicated."""
    if chosen == ADJUDICATED:
        return adjudicated if adjudicated is not None else M.LabelTable.empty()
    return adjudicated if adjudicated is not None and len(adjudicated) else None


def vetting_needed(chosen: str, sensitivity: bool) -> bool:
    """Whether the report fits the annotator models: for a reference other than the default, or when the sensitivity is asked."""
    return chosen != DEFAULT_REFERENCE or bool(sensitivity)


def not_computed() -> dict:
    """The `competence` or `sensitivity` section of a report that did not fit the annotator models."""
    return {"computed": False, "note": NOT_COMPUTED}


def check_sensitivity(value: str | None) -> bool:
    """`?sensitivity=`: 1 or true asks for it, 0, false or nothing does not; ValueError otherwise."""
    text = (value or "").strip().lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise ValueError(f"sensitivity must be 1 or 0, not '{value}'")


def check_reference(value: str | None) -> str:
    """The reference asked for (None or empty: the default); ValueError with the choices otherwise."""
    value = value or DEFAULT_REFERENCE
    if value not in REFERENCES:
        raise ValueError(f"unknown human reference '{value}' (choose {', '.join(REFERENCES)})")
    return value


@dataclass(frozen=True, eq=False)
class Vetting:
    """The two aggregates, the flagged annotators and every reference as (name, labels, note)."""

    dawid_skene: Aggregate
    mace: Aggregate
    flagged: dict[str, tuple[str, ...]]
    references: list[tuple[str, M.LabelTable, str]]
    rounds: int
    adjudicated: dict | None = None  # adjudicated_counts, when the `adjudicated` reference is among the references

    def labels(self, name: str) -> M.LabelTable:
        return next(table for ref, table, _ in self.references if ref == name)


def _competence_flags(aggregate: Aggregate) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in aggregate.raters:
        c = r.competence
        if c.value is not None and c.ci_high is not None and c.ci_high < MIN_MACE_COMPETENCE:
            out[r.rater] = [f"MACE competence {c.value:.2f} (95% CI {c.ci_low:.2f}–{c.ci_high:.2f}, n={c.n}) below {MIN_MACE_COMPETENCE:g}"]
    return out


def competence_rounds(rounds: int, n_labels: int) -> int:
    """The bootstrap rounds of the competences: the report's, capped (see COMPETENCE_CELLS)."""
    budget = max(COMPETENCE_MIN_ROUNDS, COMPETENCE_CELLS // max(n_labels, 1))
    return min(rounds, COMPETENCE_ROUNDS, budget)


def vet(humans: M.LabelTable, rounds: int, seed: int, adjudicated: M.LabelTable | None = None) -> Vetting:
    """Fit both models on the human labels, flag annotators, and build the references (`adjudicated`
    among them when the adjudicated answers are given, see `adjudicated_used`)."""
    rounds = competence_rounds(rounds, len(humans))
    ds, mc = dawid_skene(humans, rounds=rounds, seed=seed), mace(humans, rounds=rounds, seed=seed)
    position = human_position(humans, margin=POSITION_MARGIN, rounds=rounds, seed=seed) if len(humans) else []
    flagged = flagged_raters(position=position, flagged_elsewhere=_competence_flags(mc))
    references = standard_references(humans, dawid_skene=ds, mace=mc, flagged=flagged, adjudicated=adjudicated)
    present = {name for name, _, _ in references}
    for name in REFERENCES:  # a model that could not run (no labels) leaves the humans as they are
        if name not in present and name != ADJUDICATED:
            references.append((name, humans, f"{name} cannot run on no labels: the human labels as they are"))
    counts = None if adjudicated is None else adjudicated_counts(adjudicated)
    if counts is not None:  # the note says the pairs too, as every format must
        note = f"{_counted(counts)}; the annotators' labels of those items replaced by the final answer"
        references = [(name, table, note if name == ADJUDICATED else n) for name, table, n in references]
    references.sort(key=lambda r: REFERENCES.index(r[0]))
    return Vetting(ds, mc, flagged, references, rounds, counts)


def humans_digest(humans: M.LabelTable) -> str:
    """A digest of the human labels (every column and the vocabulary): equal digests, equal fits."""
    h = hashlib.sha256(repr(humans.vocab).encode())
    for name in ("pair", "criterion", "category", "rater", "sys_lo", "sys_hi", "outcome", "first", "longer"):
        h.update(np.ascontiguousarray(getattr(humans, name)).tobytes())
    return h.hexdigest()


def vet_cached(campaign_pk: int, humans: M.LabelTable, rounds: int, seed: int, adjudicated: M.LabelTable | None = None) -> Vetting:
    """`vet`, shared while the human labels (and adjudicated answers) stay the same: a judge's new
    verdicts do not refit the models (their bootstrap is most of the reference's cost)."""
    parts = (campaign_pk, "human-reference", rounds, seed, humans_digest(humans))
    if adjudicated is not None:  # without it the key stays as it was
        parts += ("adjudicated", humans_digest(adjudicated))
    return report_cache.computed_once(
        parts, lambda: vet(humans, rounds, seed, adjudicated), what=f"annotator competence of campaign {campaign_pk}"
    )


def statement(chosen: str, adjudicated: dict | None) -> str:
    """The sentence naming the reference the judge statistics use (with the number adjudicated, for `adjudicated`)."""
    text = f"The judge statistics of this report are computed against the '{chosen}' human reference: {MEANING[chosen]}"
    if chosen == ADJUDICATED:
        text += "; " + _counted(adjudicated or adjudicated_counts(None))
    return text + "."


def _counted(counts: dict) -> str:
    """ "12 items adjudicated, on 9 pairs"."""
    items, pairs = counts["n_items"], counts["n_pairs"]
    return f"{items:,} item{'' if items == 1 else 's'} adjudicated, on {pairs:,} pair{'' if pairs == 1 else 's'}"


def reference_section(vetting: Vetting | None, chosen: str, adjudicated: dict | None = None) -> dict:
    """The `human_reference` section: the reference the main figures use, and every choice's size
    (without the annotator models, only the reference used). `adjudicated`: `adjudicated_counts` of the campaign."""
    head = {
        "used": chosen,
        "default": DEFAULT_REFERENCE,
        "choices": list(REFERENCES),
        "scope": SCOPE,
        "statement": statement(chosen, adjudicated),
        "adjudicated": adjudicated,
        "flag_rule": FLAG_RULE,
        "computed": vetting is not None,
    }
    if vetting is None:
        return {**head, "note": NOT_COMPUTED}
    refs = []
    for name, table, note in vetting.references:
        refs.append(
            {
                "name": name,
                "meaning": MEANING[name],
                "note": note,
                "n_labels": len(table),
                "n_items": int(np.unique(table.item).size) if len(table) else 0,
                "n_raters": len(table.rater_names()) if len(table) else 0,
            }
        )
    return {
        **head,
        "flagged": {display(name): list(why) for name, why in vetting.flagged.items()},
        "references": refs,
    }


def _aggregate(aggregate: Aggregate, humans: M.LabelTable) -> dict:
    """A model's fit and its label per item: the winning system's name, `tie`, or None when unresolved."""
    items = []
    if aggregate.reason is None:
        vocab = humans.vocab
        systems = {int(p): (vocab.systems[lo], vocab.systems[hi]) for p, lo, hi in zip(humans.pair, humans.sys_lo, humans.sys_hi)}
        for pair, criterion, code, post in zip(aggregate.item_pair, aggregate.item_criterion, aggregate.label, aggregate.posterior):
            lo, hi = systems[int(pair)]
            label = {M.LO_WINS: lo, M.HI_WINS: hi, M.TIED: M.TIE}.get(int(code))
            items.append(
                {
                    "pair": vocab.pairs[int(pair)],
                    "criterion": vocab.criteria[int(criterion)],
                    "systems": [lo, hi],
                    "label": label,
                    "posterior": [rounded(p) for p in post],
                }
            )
    return {
        "method": aggregate.method,
        "classes": list(aggregate.classes),
        "priors": None if aggregate.priors is None else [rounded(p) for p in aggregate.priors],
        "iterations": aggregate.iterations,
        "n_items": int(len(aggregate.label)),
        "n_unresolved": aggregate.n_unresolved,
        "reason": aggregate.reason,
        "items": items,
    }


def competence_section(vetting: Vetting | None, humans: M.LabelTable, seed: int) -> dict:
    """The `competence` section: per annotator both models' competence (95% CI, n), per item the aggregated labels."""
    if vetting is None:
        return not_computed()
    ds = {r.rater: r for r in vetting.dawid_skene.raters}
    mc = {r.rater: r for r in vetting.mace.raters}
    annotators = []
    for name in sorted(set(ds) | set(mc)):
        d, m = ds.get(name), mc.get(name)
        annotators.append(
            {
                "name": display(name),
                "dawid_skene": estimate(d.competence) if d else None,
                "mace": estimate(m.competence) if m else None,
                "flagged": name in vetting.flagged,
            }
        )
    return {
        "computed": True,
        "method": (
            "Dawid-Skene (a confusion matrix per annotator; competence = the probability that their answer is the true class, "
            "averaged over the classes with the fitted priors) and MACE (competence = the probability that they know the answer "
            "rather than guess), fitted by EM on the human labels (calibration.metrics.competence, held equal to crowd-kit)"
        ),
        "ci_rule": (
            f"95% percentile CI of the pair bootstrap, each round refitting the model ({vetting.rounds} rounds, seed {seed}: the "
            f"report's rounds, at most {COMPETENCE_ROUNDS} and at most {COMPETENCE_CELLS:,} / labels, never fewer than "
            f"{COMPETENCE_MIN_ROUNDS})"
        ),
        "rounds": vetting.rounds,
        "note": TIE_HANDLING,
        "label_rule": "items: label is the winning system, tie, or null when unresolved; posterior follows classes (lo: the first of the item's two systems in name order wins, hi: the second)",
        "annotators": annotators,
        "dawid_skene": _aggregate(vetting.dawid_skene, humans),
        "mace": _aggregate(vetting.mace, humans),
    }


def _alt_verdict(reference: M.LabelTable, items: M.LabelTable, epsilon: float | None, unit: str) -> str:
    if epsilon is None:
        return "no verdict: ε not set"
    h, m = (reference, items) if not len(items) or items.vocab == reference.vocab else align_tables(reference, items)
    result = alttest.alt_test(human_ratings(h), judge_ratings(m), epsilon=epsilon, unit=unit, scoring=SCORING, rounds=0)
    if not result.ran:
        return "cannot run"
    return "passes" if result.passes else "fails"


def sensitivity_section(
    vetting: Vetting | None,
    humans: M.LabelTable,
    votes_by_judge: dict[str, M.Votes],
    merged_by_judge: dict[str, M.LabelTable],
    *,
    chosen: str,
    epsilon: float | None,
    unit: str,
    rounds: int,
    seed: int,
) -> dict:
    """The `sensitivity` section: each judge's PAR, κ and alt-test verdict under every reference, with the shift from `majority`."""
    if vetting is None:
        return not_computed()

    withheld: set[tuple[int, str, str]] = set()  # (reference, judge, statistic) resting on too few pairs for an interval

    def shown(est: M.Estimate, judge: str, statistic: str) -> M.Estimate:
        if not est.too_few_pairs:
            return est
        withheld.add((id_of[0], judge, statistic))
        return M.Estimate(est.value, est.n, n_pairs=est.n_pairs)

    id_of = [0]

    def statistics(_judges, reference: M.LabelTable) -> dict:
        id_of[0] = next(i for i, (_, table, _) in enumerate(vetting.references) if table is reference)
        out = {}
        for name, votes in votes_by_judge.items():
            if not len(votes.items) or not len(reference):
                out[name] = {"par": None, "kappa": None, "alt_test": None}
                continue
            ag = M.agreement(votes.items, reference, rounds, seed, share=votes.share)
            out[name] = {
                "par": shown(ag.par, name, "par"),
                "kappa": shown(ag.kappa, name, "kappa"),
                "alt_test": _alt_verdict(reference, merged_by_judge[name], epsilon, unit),
            }
        return out

    table = reference_sensitivity(humans, [(n, t, note) for n, t, note in vetting.references], statistics)
    rows = {}
    index = {name: i for i, (name, _, _) in enumerate(vetting.references)}
    for row in table.rows:
        entry = rows.setdefault(row.judge, {"judge": row.judge})
        entry[row.statistic] = {
            ref: {
                "value": rounded(c.value) if isinstance(c.value, float) else c.value,
                "ci": None if c.ci is None or c.ci[0] is None else [rounded(c.ci[0]), rounded(c.ci[1])],
                "n": c.n,
                "shift": rounded(c.shift),
                "changed": c.changed,
                "outside_baseline_ci": c.outside_baseline_ci,
                "ci_note": M.TOO_FEW_PAIRS if (index[ref], row.judge, row.statistic) in withheld else None,
            }
            for ref, c in row.cells.items()
        }
    return {
        "computed": True,
        "baseline": table.baseline,
        "used": chosen,
        "references": [
            {"name": i.name, "n_labels": i.n_labels, "n_items": i.n_items, "n_raters": i.n_raters, "note": i.note, "reason": i.reason}
            for i in table.references
        ],
        "statistics": {
            "par": "agreement with the humans (PAR) against the reference, 95% pair-bootstrap CI",
            "kappa": "Cohen's κ against the reference's strict majority per item, 95% pair-bootstrap CI",
            "alt_test": "the alt-test's verdict (pooled, the report's ε and unit); it needs several annotators per item, so it "
            "cannot run on a one-label-per-item reference (dawid-skene, mace)",
        },
        "shift_rule": "shift: the value minus the value under majority; changed: a verdict that differs or a number that moved by more than 1e-9",
        "rounds": rounds,
        "judges": list(rows.values()),
    }
