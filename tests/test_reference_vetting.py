"""Issue 26's done-when, at the pure level: on a simulated campaign with one careless annotator
(random answers) and one left-leaning annotator (the article shown first 80% of the time), gold
accuracy, competence (Dawid-Skene and MACE) and the first-position rate each single out the right
annotator with a 95% CI that excludes every other annotator's."""

import numpy as np
import pytest

from calibration.metrics import TIE, LabelTable, agreement, merge_swapped
from calibration.metrics.competence import dawid_skene, mace
from calibration.metrics.quality import flagged_raters, gold_accuracy, human_position
from calibration.metrics.sensitivity import reference_sensitivity, standard_references

GOOD = ("good.ana", "good.ben", "good.cleo", "good.dev")
CARELESS, LEFTY = "careless", "lefty"
ANNOTATORS = GOOD + (CARELESS, LEFTY)
CRITERIA = tuple(f"crit.{i}" for i in range(6))
TARGETED = CRITERIA[:3]  # the criteria a gold pair's degradation targets (scored); the rest are not
LEAN = 0.6  # lefty picks the first-shown article this often, else answers as a good annotator would


def simulate(seed=26, n_pairs=60, n_gold=24, repeat_rate=0.25, skill=0.85):
    """A campaign where every annotator labels every pair, some pairs again in the other order.

    Returns (human table, the gold expectations, kinds of the gold pairs, a judge's table)."""
    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("pair", "criterion", "category", "rater", "rater_kind", "system_a", "system_b", "winner", "first_system")}
    expected, kinds = {}, {}

    def add(pair, crit, category, rater, kind, a, b, winner, first):
        for key, value in zip(cols, (pair, crit, category, rater, kind, a, b, winner, first)):
            cols[key].append(value)

    def answer(rater, truth, a, b, first):
        other = [x for x in (a, b, TIE) if x != truth]
        if rater == CARELESS:
            return rng.choice([a, b, TIE])
        if rater == LEFTY and rng.random() < LEAN:
            return first
        return truth if rng.random() < skill else rng.choice(other)

    judge_rows = []
    for p in range(n_pairs + n_gold):
        gold = p >= n_pairs
        pair = f"gold.{p}" if gold else f"pair.{p}"
        a, b = ("wikipedia", "wikipedia~degraded") if gold else ("gpt-4.1", "qwen2.5-72b")
        truths = {}
        for crit in CRITERIA:
            if gold and crit in TARGETED:
                truths[crit] = a
                expected[(pair, crit)] = a
            else:
                truths[crit] = rng.choice([a, b, TIE], p=[0.45, 0.45, 0.1])
        if gold:
            kinds[pair] = "lead_removed" if p % 2 else "section_removed"
        for rater in ANNOTATORS:
            first = a if rng.random() < 0.5 else b
            orders = [first] + ([b if first == a else a] if rng.random() < repeat_rate else [])
            for shown_first in orders:
                for crit in CRITERIA:
                    add(pair, crit, "cat", rater, "human", a, b, str(answer(rater, truths[crit], a, b, shown_first)), shown_first)
        for crit in CRITERIA:
            verdict = truths[crit] if rng.random() < 0.8 else rng.choice([a, b, TIE])
            judge_rows.append((pair, crit, "cat", "judge-4.1", "judge", a, b, str(verdict), None))
    for row in judge_rows:
        add(*row)
    table = LabelTable.from_columns(**cols)
    return table.humans(), expected, kinds, table.judges()


@pytest.fixture(scope="module")
def campaign():
    return simulate()


def singles_out(estimates: dict, odd: str, low: bool) -> bool:
    """The odd one's CI lies wholly below (low) or above every other one's CI."""
    e = estimates[odd]
    others = [x for name, x in estimates.items() if name != odd]
    if low:
        return all(e.ci_high < x.ci_low for x in others)
    return all(e.ci_low > x.ci_high for x in others)


def test_it_singles_out_the_careless_annotator_by_gold_accuracy(campaign):
    humans, expected, kinds, _ = campaign
    gold = {g.rater: g.accuracy for g in gold_accuracy(humans, expected, kinds=kinds)}
    assert set(gold) == set(ANNOTATORS)
    assert singles_out(gold, CARELESS, low=True), gold
    assert all(g.n_pairs == 24 for g in gold.values())


def test_it_singles_out_the_careless_annotator_by_dawid_skene_and_mace_competence(campaign):
    humans, *_ = campaign
    for model in (dawid_skene(humans, rounds=200), mace(humans, rounds=200)):
        competence = {r.rater: r.competence for r in model.raters}
        assert singles_out(competence, CARELESS, low=True), (model.method, competence)


def test_it_singles_out_the_left_leaning_annotator_by_first_position_rate(campaign):
    humans, *_ = campaign
    position = {p.rater: p for p in human_position(humans)}
    rates = {name: p.first_position_rate for name, p in position.items()}
    assert singles_out(rates, LEFTY, low=False), rates
    assert rates[LEFTY].value == pytest.approx(0.8, abs=0.06)
    assert [name for name, p in position.items() if p.lean] == [LEFTY]
    assert position[LEFTY].lean == "first"
    # leaning on position also makes the swapped repeats disagree
    consistency = {name: p.consistency for name, p in position.items()}
    assert consistency[LEFTY].value < min(c.value for name, c in consistency.items() if name != LEFTY)
    assert all(c.n > 0 for c in consistency.values())


def test_it_flags_the_careless_and_the_leaning_annotators_and_nobody_else(campaign):
    humans, expected, kinds, _ = campaign
    flags = flagged_raters(gold=gold_accuracy(humans, expected, kinds=kinds), position=human_position(humans))
    assert set(flags) == {CARELESS, LEFTY}
    assert any("gold accuracy" in why for why in flags[CARELESS])
    assert any("leans to the article shown first" in why for why in flags[LEFTY])


def test_it_shows_how_the_judges_agreement_moves_under_each_reference(campaign):
    humans, expected, kinds, judges = campaign
    flags = flagged_raters(gold=gold_accuracy(humans, expected, kinds=kinds), position=human_position(humans))
    references = standard_references(humans, dawid_skene=dawid_skene(humans, rounds=0), mace=mace(humans, rounds=0), flagged=flags)

    def statistics(judge_table, reference):
        out = {}
        for name in judge_table.rater_names():
            a = agreement(merge_swapped(judge_table.for_rater(name)), reference, rounds=200)
            out[name] = {"PAR": a.par, "kappa": a.kappa, "verdict": "good" if a.par.value > 0.7 else "weak"}
        return out

    table = reference_sensitivity(LabelTable.concat(humans, judges), references, statistics)
    assert [r.name for r in table.references] == ["majority", "dawid-skene", "mace", "exclude-flagged"]
    assert table.baseline == "majority"
    par = next(r for r in table.rows if r.statistic == "PAR")
    # the careless and leaning annotators pull the judge's PAR against every label down; the
    # aggregated and the cleaned references lift it
    assert par.cells["majority"].shift == 0.0
    for name in ("dawid-skene", "mace", "exclude-flagged"):
        assert par.cells[name].shift > 0.03, (name, par.cells[name])
        assert par.cells[name].changed and par.cells[name].outside_baseline_ci
    info = {r.name: r for r in table.references}
    assert info["exclude-flagged"].n_raters == 4
    assert info["dawid-skene"].n_items == info["mace"].n_items == 84 * 6  # one label per item, none unresolved
    assert info["majority"].n_labels == len(humans)
