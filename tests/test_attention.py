"""calibration.metrics.attention: speed flags against the campaign's and the rater's own medians, and
rationales pasted verbatim across criteria or pairs. Flags for staff, never a rejection."""

import numpy as np
import pytest

from calibration.metrics.attention import Rationale, Timing, normalise_rationale, repeated_rationales, speed_flags
from calibration.metrics.quality import flagged_raters


def timings(rng, rater, pace, pairs=20, criteria=("lead", "coverage"), base=None):
    base = base or {"lead": 40.0, "coverage": 120.0}
    rows = []
    for p in range(pairs):
        for c in criteria:
            rows.append(Timing(rater, f"p{p}", base[c] * pace * rng.uniform(0.8, 1.25), c))
        rows.append(Timing(rater, f"p{p}", 600 * pace * rng.uniform(0.8, 1.25)))
    return rows


def test_it_flags_a_rater_who_rushes_against_each_criterions_campaign_median():
    rng = np.random.default_rng(0)
    rows = timings(rng, "alice", 1.0) + timings(rng, "bob", 1.1) + timings(rng, "cleo", 0.9) + timings(rng, "rush", 0.15)
    report = speed_flags(rows)
    by = {(r.rater, r.level): r for r in report.raters}
    assert set(report.campaign_median) == {"criterion", "pair"}
    assert set(report.campaign_median["criterion"]) == {"lead", "coverage"}  # one median per criterion
    rush = by[("rush", "criterion")]
    assert rush.flagged and rush.fast.value == 1.0 and rush.fast.n == 40 and rush.fast.n_pairs == 20
    assert rush.relative_median < 0.25 and len(rush.fast_answers) == 40
    assert by[("rush", "pair")].flagged
    assert not any(r.flagged for r in report.raters if r.rater != "rush")
    assert set(report.flagged()) == {"rush"}
    assert "rush" in flagged_raters(flagged_elsewhere=report.flagged())
    assert "25%" in report.rule


def test_it_flags_bursts_of_haste_and_leaves_untimed_answers_out():
    rng = np.random.default_rng(1)
    rows = timings(rng, "alice", 1.0) + timings(rng, "bob", 1.0)
    # dora reads at the usual pace but skims six of her twenty pairs' criteria
    dora = timings(rng, "dora", 1.0)
    dora = [Timing(t.rater, t.pair, t.seconds * (0.05 if t.criterion and int(t.pair[1:]) < 6 else 1.0), t.criterion) for t in dora]
    dora += [Timing("dora", "p99", None, "lead"), Timing("dora", "p98", float("nan"), "lead"), Timing("dora", "p97", 0.0, "lead")]
    report = speed_flags(rows + dora)
    d = next(r for r in report.raters if (r.rater, r.level) == ("dora", "criterion"))
    assert d.n_untimed == 3 and d.fast.n == 40
    assert d.fast.value == pytest.approx(12 / 40) and d.fast_for_self == 12
    assert d.flagged and "30% of 40 answers" in d.reasons[0]
    assert d.relative_median > 0.5  # her pace is normal: only the share of fast answers flags her


def test_it_refuses_rule_fractions_outside_zero_to_one():
    with pytest.raises(ValueError, match="fast_fraction"):
        speed_flags([], fast_fraction=0)
    assert speed_flags([]).raters == ()


def test_it_normalises_rationales_before_comparing_them():
    assert normalise_rationale("  The LEAD is better!! ") == normalise_rationale("the lead, is better")
    assert normalise_rationale("Ｌｅａｄ") == "lead"  # full-width letters fold (NFKC)
    assert normalise_rationale("?!  ...") == ""


def test_it_finds_rationales_repeated_across_criteria_or_pairs_but_not_on_a_swapped_repeat():
    rows = [
        Rationale("alice", "p1", "lead", "B explains the subject in its first lines."),
        Rationale("alice", "p1", "tone", "A is more neutral about the dispute."),
        Rationale("alice", "p1", "lead", "B explains the subject in its first lines."),  # the same question met again
        Rationale("bob", "p1", "lead", "Looks better."),
        Rationale("bob", "p1", "tone", "looks better"),
        Rationale("bob", "p2", "lead", "Looks better!"),
        Rationale("bob", "p2", "tone", "A keeps its own opinions out."),
        Rationale("bob", "p3", "tone", ""),
        Rationale("cleo", "p1", "lead", "same"),
        Rationale("cleo", "p2", "lead", "same"),
    ]
    result = {r.rater: r for r in repeated_rationales(rows)}
    assert result["alice"].repeated.value == 0.0 and not result["alice"].flagged
    bob = result["bob"]
    assert (bob.repeated.n, round(bob.repeated.value, 2), bob.flagged) == (4, 0.75, True)  # the empty one is no rationale
    assert bob.groups[0].text == "looks better" and bob.groups[0].answers == (("p1", "lead"), ("p1", "tone"), ("p2", "lead"))
    assert result["cleo"].repeated.value == 1.0 and not result["cleo"].flagged  # two answers: under the threshold of 3
    assert repeated_rationales(rows, min_repeated=2)[-1].flagged
    with pytest.raises(ValueError):
        repeated_rationales(rows, min_repeated=1)


def test_it_flags_raters_who_all_rush_by_the_absolute_floors():
    # Two annotators answer 39 criteria of a 4,400-word pair in 28 s each: the campaign's medians are
    # theirs, so only the floors (4 s a criterion, 1,000 words a minute) can see it.
    rows = []
    for rater in ("ann", "ben"):
        for p in range(5):
            rows += [Timing(rater, f"p{p}", 0.7, f"c{c}") for c in range(39)]
            rows.append(Timing(rater, f"p{p}", 28.0, words=4400))
    report = speed_flags(rows)
    by = {(r.rater, r.level): r for r in report.raters}
    for rater in ("ann", "ben"):
        assert by[(rater, "criterion")].flagged and by[(rater, "criterion")].fast.value == 1.0
        assert by[(rater, "pair")].flagged and "absolute floor" in by[(rater, "pair")].reasons[0]
    assert "4 s" in report.rule and "1,000 words a minute" in report.rule
    # The same pace at realistic times flags nobody, and a pair without its word count has no reading floor.
    calm = [Timing(t.rater, t.pair, t.seconds * 100, t.criterion, t.words) for t in rows]
    assert speed_flags(calm).flagged() == {}
    assert not speed_flags([Timing("ann", "p1", 28.0), Timing("ben", "p1", 30.0)]).flagged()


def test_it_refuses_a_negative_floor():
    with pytest.raises(ValueError, match="floor_seconds"):
        speed_flags([], floor_seconds=-1)
