"""calibration.selectors: DB rows into metrics inputs, judge costs, the cache stamp and the disagreement browser."""

from decimal import Decimal

import numpy as np
import pytest

from annotate.models import Criterion
from annotate.services.answers import label_save, position_from_winner
from annotate.services.claims import assignment_claim_next
from calibration import metrics as M
from calibration import selectors
from calibration.metrics import LabelRow
from judges.models import JudgeUnit
from protocols.pairwise import system_of
from tests.calibration_builders import ATLAS, QUILL, WIKI, by_criterion, hand_campaign, hand_dataset, judge_rows, label_pairs, pair_of

pytestmark = pytest.mark.django_db


def rows(table, rater: str) -> set[tuple]:
    return {(x.pair, x.criterion, x.winner, x.first_system, x.longer_system) for x in table.to_labels() if x.rater == rater}


def test_it_maps_winners_first_and_longer_systems_for_both_orders(alice, bob):
    campaign = hand_campaign([alice, bob])
    p1, p2 = pair_of(campaign, ATLAS), pair_of(campaign, QUILL)
    # Alice saw A (wikipedia) on the left in p1, on the right in p2.
    label_pairs(campaign, alice, {p1: by_criterion("a", "b", "a"), p2: by_criterion("b", "a", "b")}, a_first={p1: True, p2: False})
    judge_rows(campaign, "j", {(p1, True): by_criterion("a", "tie", "b"), (p2, False): by_criterion("b", "a", "tie")})
    table = selectors.calibration_table(campaign=campaign)
    s1, s2 = str(p1.pk), str(p2.pk)
    # Longer article: wikipedia (120 words) beats atlas_agent (60); quill_researcher (200) beats wikipedia.
    assert rows(table, "human:alice") == {
        (s1, "c1", WIKI, WIKI, WIKI),
        (s1, "c2", ATLAS, WIKI, WIKI),
        (s1, "c3", WIKI, WIKI, WIKI),
        (s2, "c1", QUILL, QUILL, QUILL),
        (s2, "c2", WIKI, QUILL, QUILL),
        (s2, "c3", QUILL, QUILL, QUILL),
    }
    assert rows(table, "j") == {
        (s1, "c1", WIKI, WIKI, WIKI),
        (s1, "c2", "tie", WIKI, WIKI),
        (s1, "c3", ATLAS, WIKI, WIKI),
        (s2, "c1", QUILL, QUILL, QUILL),
        (s2, "c2", WIKI, QUILL, QUILL),
        (s2, "c3", "tie", QUILL, QUILL),
    }
    kinds = dict(zip(table.vocab.raters, table.vocab.rater_kinds))
    assert kinds == {"human:alice": "human", "j": "judge"}
    categories = {(x.criterion, x.category) for x in table.to_labels()}
    assert categories == {("c1", "style"), ("c2", "style"), ("c3", "neutral")}
    assert all(isinstance(x, LabelRow) for x in table.to_labels())


def test_it_counts_submitted_work_unless_asked_for_everything(alice, bob):
    campaign = hand_campaign([alice, bob])
    p1, p2 = pair_of(campaign, ATLAS), pair_of(campaign, QUILL)
    label_pairs(campaign, alice, {p1: by_criterion("a", "a", "a"), p2: by_criterion("b", "b", "b")})
    # Bob decides one criterion of his first pair and does not submit.
    assignment = assignment_claim_next(campaign=campaign, user=bob)
    criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key="c1")
    label_save(
        assignment=assignment, criterion=criterion, user=bob, position=position_from_winner(assignment, "b"), rationale="not sure yet"
    )
    assert len(selectors.calibration_table(campaign=campaign)) == 6
    everything = selectors.calibration_table(campaign=campaign, include_unsubmitted=True)
    assert len(everything) == 7 and "human:bob" in everything.vocab.raters


def test_it_sums_costs_and_counts_errors_per_judge(alice, bob):
    campaign = hand_dataset(alice, bob)
    summaries = {s.name: s for s in selectors.judge_summaries(campaign=campaign)}
    assert list(summaries) == ["cheap", "sharp"]
    sharp, cheap = summaries["sharp"], summaries["cheap"]
    # sharp: 4 done units and 1 failed one, each call costing 0.02 (the failed call is paid too).
    assert (sharp.n_units, sharp.errors, sharp.n_calls, sharp.n_invalid_calls) == (5, 1, 5, 1)
    assert sharp.cost_usd == pytest.approx(0.10) and sharp.model == "big-model"
    assert sharp.prompt_tokens == 4000 and sharp.mean_latency_ms == 800
    assert (cheap.n_units, cheap.errors, cheap.cost_usd) == (8, 0, pytest.approx(0.008))
    table = selectors.calibration_table(campaign=campaign)
    # Only done units give verdicts: 6 for sharp (one order), 12 for cheap (both orders).
    assert len(table.for_rater("sharp")) == 6 and len(table.for_rater("cheap")) == 12


def test_it_changes_the_stamp_when_work_changes(alice, bob):
    campaign = hand_dataset(alice, bob)
    before = selectors.calibration_stamp(campaign=campaign)
    assert selectors.calibration_stamp(campaign=campaign) == before
    unit = JudgeUnit.objects.filter(judge__name="cheap").first()
    unit.calls.update(cost_usd=Decimal("0.5"))
    unit.calls.create(attempt=2, request_hash="again", valid=True, cost_usd=Decimal("0.1"))
    assert selectors.calibration_stamp(campaign=campaign) != before


def test_it_lists_pairs_where_a_judge_and_the_human_majority_disagree(alice, bob, django_assert_num_queries):
    campaign = hand_dataset(alice, bob)
    with django_assert_num_queries(4):
        found = selectors.disagreements(campaign=campaign, criterion_key="c3")
    # c3: humans agree only on p1 (atlas_agent); cheap merged p1 to wikipedia, sharp agrees.
    assert (found.n_items, found.n_split, found.n_disagree) == (1, 1, 1)
    assert found.judges == ["cheap", "sharp"]
    [item] = found.items
    assert item.pair.system_b == ATLAS and item.human_winner == ATLAS
    assert [(h.annotator, h.winner) for h in item.humans] == [("alice", ATLAS), ("bob", ATLAS)]
    assert all(h.rationale.endswith("Clearer on this point.") for h in item.humans)
    [judge] = item.judges
    assert judge.judge == "cheap" and judge.winner == WIKI
    assert [(v.first_system, v.winner) for v in judge.verdicts] == [(WIKI, WIKI), (ATLAS, WIKI)]
    assert judge.verdicts[0].rationale.startswith("cheap says a")


def test_it_merges_both_orders_and_filters_by_judge(alice, bob):
    campaign = hand_dataset(alice, bob)
    # c1: humans say wikipedia on both pairs; cheap split its two orders on p2 (a tie once merged).
    found = selectors.disagreements(campaign=campaign, criterion_key="c1")
    assert found.n_disagree == 1 and found.items[0].pair.system_b == QUILL
    assert found.items[0].judges[0].winner == "tie"
    assert selectors.disagreements(campaign=campaign, criterion_key="c1", judge_name="sharp").n_disagree == 0
    assert selectors.disagreements(campaign=campaign, criterion_key="nope").criterion is None


def test_it_codes_the_columns_as_the_string_columns_would_be():
    rng = np.random.default_rng(4)
    systems = ["wikipedia", "storm", "atlas", "b-side", "Zeta"]
    infos = {}
    for pair_id in (9, 10, 100, 2, 33):  # as strings, "10" < "100" < "2" < "33" < "9"
        a, b = rng.choice(systems, 2, replace=False)
        longer = (str(a), str(b), None)[pair_id % 3]
        infos[pair_id] = selectors.PairInfo(pair_id, f"t{pair_id}", str(a), str(b), longer)
    coded, rows = selectors._Columns(), []
    for _ in range(300):
        info = infos[int(rng.choice(list(infos)))]
        rater = str(rng.choice(["judge-b", "human:zoe", "human:al", "judge-a"]))
        kind = "human" if rater.startswith("human:") else "judge"
        side = str(rng.choice(["a", "b", "tie", "both_bad"]))
        a_first = (True, False, None)[int(rng.integers(3))]
        criterion, category = str(rng.choice(["style", "facts", "Clarity"])), (None, "c2", "c1")[int(rng.integers(3))]
        coded.add(info, criterion, category, rater, kind, side, a_first)
        rows.append((info, criterion, category, rater, kind, side, a_first))
    expected = M.LabelTable.from_columns(
        pair=[str(r[0].pair_id) for r in rows], criterion=[r[1] for r in rows], category=[r[2] for r in rows],
        rater=[r[3] for r in rows], rater_kind=[r[4] for r in rows],
        system_a=[r[0].system_a for r in rows], system_b=[r[0].system_b for r in rows],
        winner=[system_of(r[5], r[0].system_a, r[0].system_b) for r in rows],
        first_system=[None if r[6] is None else r[0].system_a if r[6] else r[0].system_b for r in rows],
        longer_system=[r[0].longer_system for r in rows],
    )  # fmt: skip
    got = coded.table()
    assert got.vocab == expected.vocab
    for column in ("pair", "criterion", "category", "rater", "sys_lo", "sys_hi", "outcome", "first", "longer"):
        assert getattr(got, column).tobytes() == getattr(expected, column).tobytes(), column
    assert len(selectors._Columns().table()) == 0
    clash = selectors._Columns()
    clash.add(infos[9], "style", "c1", "judge-a", "judge", "a", True)
    clash.add(infos[9], "style", "c1", "judge-a", "human", "a", True)
    with pytest.raises(ValueError, match="same rater_kind"):
        clash.table()
