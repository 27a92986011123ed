"""Swapped repeats (issue 26 item 2): the claim hands an annotator a pair they submitted again, later,
in the other order; nothing shows it apart; it never counts as a second annotator; and the annotators'
position figures read it, in the attention page and every format of the report."""

import re

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Assignment, Campaign, GoldPair, Pair, System
from annotate.selectors import campaign_progress_page
from annotate.services.adjudication import disagreements
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next, pairs_left
from annotate.services.repeats import due_repeats, repeat_draw
from calibration.attention import attention_flags
from calibration.report.build import build_report
from calibration.report.formats import render, render_table_csv
from interchange.export import label_rows
from tests.calibration_builders import judge_rows
from tests.helpers import run
from tests.test_gold_pairs import _api, answer, make_gold

pytestmark = pytest.mark.django_db


def _repeats(campaign: Campaign, rate: float = 1.0, gap: int = 2) -> Campaign:
    Campaign.objects.filter(pk=campaign.pk).update(repeat_rate=rate, repeat_gap=gap)
    campaign.refresh_from_db()
    return campaign


def work(campaign, user, pick, limit: int = 100) -> list[Assignment]:
    """Claims and answers until nothing is left (pick(assignment, criterion key) -> side)."""
    done = []
    while len(done) < limit and (a := assignment_claim_next(campaign=campaign, user=user)) is not None:
        answer(a, user, lambda key, a=a: pick(a, key))
        done.append(a)
    return done


def first_shown(a: Assignment, key: str) -> str:
    return "a" if a.a_first else "b"


def always_a(a: Assignment, key: str) -> str:
    return "a"


# --- the claim ------------------------------------------------------------------------------


def test_it_hands_out_a_repeat_after_the_gap_in_the_other_order(campaign, alice):
    _repeats(campaign, gap=2)
    first = assignment_claim_next(campaign=campaign, user=alice)
    answer(first, alice, lambda key: "a")
    seconds = []
    for _ in range(2):
        assert due_repeats(campaign=campaign, user=alice) == []
        a = assignment_claim_next(campaign=campaign, user=alice)
        assert a.repeat_of is None and a.pair_id != first.pair_id
        answer(a, alice, lambda key: "a")
        seconds.append(a)
    # Two other pairs submitted since the first: its repeat is due, and counted among the pairs left.
    assert due_repeats(campaign=campaign, user=alice) == [first.pk]
    left = pairs_left(campaign=campaign, user=alice)
    repeat = assignment_claim_next(campaign=campaign, user=alice)
    assert repeat.repeat_of_id == first.pk and repeat.pair_id == first.pair_id and repeat.a_first is (not first.a_first)
    assert repeat.status == Assignment.Status.ACTIVE and repeat.pk != first.pk
    assert pairs_left(campaign=campaign, user=alice, active=repeat) == left
    # A second claim gives the same unfinished repeat back.
    assert assignment_claim_next(campaign=campaign, user=alice) == repeat
    answer(repeat, alice, lambda key: "a")
    # The second pair has had two submitted after it (the third and the repeat): its repeat is next.
    nxt = assignment_claim_next(campaign=campaign, user=alice)
    assert nxt.repeat_of_id == seconds[0].pk and nxt.a_first is (not seconds[0].a_first)
    answer(nxt, alice, lambda key: "a")
    # Never a repeat of a repeat, never two of one original.
    everything = work(campaign, alice, always_a)
    mine = Assignment.objects.filter(pair__campaign=campaign, annotator=alice)
    originals = mine.filter(repeat_of__isnull=True)
    # Rate 1: every original is repeated once, except the last two: nothing is submitted after them to make the gap.
    assert originals.count() == 8 and mine.count() == 14
    last_two = set(originals.order_by("-submitted_at")[:2].values_list("pk", flat=True))
    assert set(originals.filter(repeat__isnull=True).values_list("pk", flat=True)) == last_two
    assert not mine.filter(repeat_of__repeat_of__isnull=False).exists()
    assert all(r.a_first is (not r.repeat_of.a_first) and r.pair_id == r.repeat_of.pair_id for r in mine.exclude(repeat_of=None))
    assert everything and assignment_claim_next(campaign=campaign, user=alice) is None
    assert pairs_left(campaign=campaign, user=alice) == 0


def test_it_gives_no_repeat_at_rate_0(campaign, alice):
    assert campaign.repeat_rate == 0.0
    assert len(work(campaign, alice, always_a)) == 8
    assert not Assignment.objects.filter(repeat_of__isnull=False).exists()


def test_it_repeats_the_originals_the_keyed_draw_picks_and_never_a_gold_pair(campaign, alice):
    make_gold(campaign, "--per-degradation", "1")
    # A high rate so that some claim is a gold turn whatever the ids the keyed draw sees (at 0.3, eight
    # claims had no gold turn on one PostgreSQL run: 0.7^8, about 6 %); 0.9 misses with about 1e-8.
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=0.9)
    _repeats(campaign, rate=0.5, gap=0)
    work(campaign, alice, always_a)
    originals = Assignment.objects.filter(pair__campaign=campaign, annotator=alice, repeat_of__isnull=True)
    golds = set(GoldPair.objects.values_list("pair_id", flat=True))
    assert originals.filter(pair_id__in=golds).exists()  # gold pairs were given, and...
    expected = {
        a.pk
        for a in originals
        if a.pair_id not in golds and repeat_draw(campaign_id=campaign.pk, user_id=alice.pk, assignment_id=a.pk) < 0.5
    }
    repeated = set(Assignment.objects.filter(repeat_of__isnull=False).values_list("repeat_of_id", flat=True))
    assert repeated == expected and 0 < len(expected) < originals.count()  # ...never repeated


def test_it_takes_a_released_repeat_back_with_its_work(campaign, alice):
    _repeats(campaign, gap=0)
    first = assignment_claim_next(campaign=campaign, user=alice)
    answer(first, alice, lambda key: "a")
    repeat = assignment_claim_next(campaign=campaign, user=alice)
    assert repeat.repeat_of_id == first.pk
    Assignment.objects.filter(pk=repeat.pk).update(status=Assignment.Status.EXPIRED)
    again = assignment_claim_next(campaign=campaign, user=alice)
    assert again.pk == repeat.pk and again.status == Assignment.Status.ACTIVE


def test_it_never_counts_a_repeat_as_a_second_annotator(campaign, alice, bob):
    Campaign.objects.filter(pk=campaign.pk).update(overlap=1)
    _repeats(campaign, gap=0)
    first = assignment_claim_next(campaign=campaign, user=alice)
    answer(first, alice, lambda key: "a")
    repeat = assignment_claim_next(campaign=campaign, user=alice)
    answer(repeat, alice, lambda key: "b")  # the other side: it would make a disagreement if it were a vote
    page = campaign_progress_page(campaign=campaign)
    assert page["submitted"] == 1 and page["pairs_complete"] == 1
    assert disagreements(campaign=campaign) == {}
    # Bob never gets the pair (overlap 1 is filled by alice's original alone) and gets every other one.
    got = {a.pair_id for a in work(campaign, bob, always_a)}
    assert first.pair_id not in got and len(got) == 7


# --- blindness ------------------------------------------------------------------------------


def test_it_shows_a_repeat_exactly_like_a_normal_assignment_in_the_api_and_the_page(campaign, alice, bob):
    _repeats(campaign, gap=0)
    first = assignment_claim_next(campaign=campaign, user=alice)
    answer(first, alice, lambda key: "a")
    repeat = assignment_claim_next(campaign=campaign, user=alice)
    assert repeat.repeat_of_id == first.pk
    # Bob's normal assignment on the same pair, shown in the repeat's order.
    Campaign.objects.filter(pk=campaign.pk).update(repeat_rate=0)
    while (normal := assignment_claim_next(campaign=campaign, user=bob)).pair_id != repeat.pair_id:
        Assignment.objects.filter(pk=normal.pk).update(status=Assignment.Status.SUBMITTED)
    Assignment.objects.filter(pk=normal.pk).update(a_first=repeat.a_first, order="ab" if repeat.a_first else "ba")
    r, n = _api(alice, repeat), _api(bob, normal)
    assert r.keys() == n.keys()
    for key in r:
        if key == "id":
            assert isinstance(r[key], int) and isinstance(n[key], int)
        elif key == "claimed_at":
            assert re.fullmatch(r"[\d\-T:.+Z]+", r[key]) and re.fullmatch(r"[\d\-T:.+Z]+", n[key])
        else:
            assert r[key] == n[key], key
    pages = []
    for user, assignment in ((alice, repeat), (bob, normal)):
        client = Client()
        client.force_login(user)
        response = client.get(reverse("assignment", args=[assignment.pk]))
        assert response.status_code == 200
        html = response.content.decode().replace(f"/work/{assignment.pk}/", "/work/ID/").replace(user.username, "USER")
        html = html.replace(f"pairwise:reading:{assignment.pk}", "pairwise:reading:ID")  # where the reader was, per assignment
        html = re.sub(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+', r"\1TOKEN", html)
        html = re.sub(r'nonce="[^"]*"', 'nonce="N"', html)
        pages.append(html)
    assert pages[0] == pages[1]
    listed = api_list(alice)
    assert set(listed[0]) == set(api_list(bob)[0])  # the list's rows have the same fields whatever their kind


def api_list(user) -> list[dict]:
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(user)
    response = client.get(reverse("api:assignment-list"))
    assert response.status_code == 200
    return response.json()["results"]


# --- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--repeat-rate", "1.5"], "repeat rate is the share of submitted pairs"),
        (["--repeat-rate", "-0.1"], "repeat rate is the share of submitted pairs"),
        (["--repeat-rate", "nan"], "repeat rate is the share of submitted pairs"),
        (["--repeat-gap", "-1"], "repeat gap is how many other pairs"),
        (["--repeat-gap", "5000"], "repeat gap is how many other pairs"),
    ],
)
def test_it_refuses_bad_repeat_options_with_a_message(catalogue, args, message):
    result = run("create_campaign", "--name", "R", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", *args)
    assert result.code != 0 and message in result.err
    assert not Campaign.objects.filter(name="R").exists()


def test_it_sets_the_repeat_options_from_the_command_and_the_form(catalogue, rachel):
    args = ["--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--repeat-rate", "0.2", "--repeat-gap", "3"]
    assert run("create_campaign", "--name", "R", *args).code == 0
    campaign = Campaign.objects.get(name="R")
    assert (campaign.repeat_rate, campaign.repeat_gap) == (0.2, 3)
    client = Client()
    client.force_login(rachel)
    systems = list(System.objects.filter(key__in=["wikipedia", "atlas_agent"]).values_list("pk", flat=True))
    form = {"name": "Web", "criterion_set": catalogue.pk, "systems": systems, "overlap": 1, "pair_mode": "reference"}
    form.update(rationale_min_length=10, claim_timeout_minutes=120, repeat_rate="2")
    response = client.post(reverse("campaign-new"), form)
    assert response.status_code == 422 and "less than or equal to 1" in response.content.decode()
    assert not Campaign.objects.filter(name="Web").exists()
    form.update(repeat_rate="0.25", repeat_gap="4")
    response = client.post(reverse("campaign-new"), form)
    assert response.status_code == 302
    web = Campaign.objects.get(name="Web")
    assert (web.repeat_rate, web.repeat_gap) == (0.25, 4)
    with pytest.raises(Exception, match="repeat rate"):
        campaign_create(name="Bad", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], repeat_rate=True)


# --- the figures ----------------------------------------------------------------------------


def _position_by_hand(campaign) -> dict[str, tuple[float, int, float, int]]:
    """Per annotator, from the stored answers: (consistency, repeated criteria, first-position rate, answers)."""
    out = {}
    for user in {a.annotator for a in Assignment.objects.filter(pair__campaign=campaign)}:
        mine = Assignment.objects.filter(pair__campaign=campaign, annotator=user, status="submitted")
        same = total = firsts = answers = 0
        for a in mine:
            for label in a.labels.exclude(winner=""):
                if label.winner != "tie":
                    answers += 1
                    firsts += (label.winner == "a") == a.a_first
                if a.repeat_of_id is not None:
                    before = a.repeat_of.labels.get(criterion=label.criterion).winner
                    total += 1
                    same += before == label.winner
        out[user.username] = (same / total if total else None, total, firsts / answers if answers else None, answers)
    return out


@pytest.fixture
def repeated(campaign, alice, bob):
    """Alice always picks the article shown first, bob always article A, both with every pair repeated."""
    _repeats(campaign, gap=1)
    work(campaign, alice, first_shown)
    work(campaign, bob, always_a)
    return campaign


def test_it_gives_each_annotators_position_figures_equal_to_a_hand_count(repeated):
    hand = _position_by_hand(repeated)
    assert hand["alice"][:3:2] == (0.0, 1.0) and hand["bob"][0] == 1.0
    flags = attention_flags(campaign=repeated)
    # Times leave the repeats out (a pair read before is quicker): 8 timed pairs each, 16 submitted.
    assert {(r.rater, r.n_untimed + r.fast.n) for r in flags.speed.raters if r.level == "pair"} == {("alice", 8), ("bob", 8)}
    assert flags.n_pairs == 16 and Assignment.objects.filter(pair__campaign=repeated, status="submitted").count() == 32
    report = build_report(repeated, rounds=200)
    section = {a["name"]: a for a in report["human_position"]["annotators"]}
    for p in flags.position:
        name = p.rater.removeprefix("human:")
        consistency, n_repeated, rate, n_answers = hand[name]
        assert p.consistency.value == pytest.approx(consistency) and p.consistency.n == n_repeated > 0
        assert p.first_position_rate.value == pytest.approx(rate) and p.first_position_rate.n == n_answers
        row = section[name]
        assert row["position_consistency"]["value"] == pytest.approx(consistency) and row["position_consistency"]["n"] == n_repeated
        assert row["first_position_rate"]["value"] == pytest.approx(rate) and row["first_position_rate"]["n"] == n_answers
        # 8 pairs: the report withholds the interval and says why; the estimate keeps it.
        assert row["first_position_rate"]["ci"] is None and row["first_position_rate"]["ci_note"]
        assert p.first_position_rate.ci_low <= rate <= p.first_position_rate.ci_high
    assert section["alice"]["lean"] == "first" and section["bob"]["lean"] is None
    assert report["human_position"]["n_repeated"] == hand["alice"][1] + hand["bob"][1]


def test_it_shows_the_position_figures_in_every_format_and_on_the_staff_pages(repeated, rachel):
    report = build_report(repeated, rounds=100)
    for fmt in ("md", "html"):
        text = render(report, fmt)
        assert "Position bias of each annotator (swapped repeats)" in text and "alice" in text
    assert '"human_position"' in render(report, "json")
    csv_text = render_table_csv(report, "human_position")
    assert csv_text.splitlines()[0] == "Annotator,Position consistency [95% CI] (n),First-position rate [95% CI] (n),Lean"
    assert re.search(r'^alice,"0\.000 \[too few pairs for an interval\]† \(n=\d+, 8 pairs\)","1\.000 ', csv_text, flags=re.M)
    client = Client()
    client.force_login(rachel)
    response = client.get(reverse("calibration-dashboard", args=[repeated.pk]))
    assert response.status_code == 200 and "Position bias of each annotator (swapped repeats)" in response.content.decode()
    response = client.get(reverse("calibration-attention", args=[repeated.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<table" not in body.split("</title>")[0] and body.count('id="position-alice"') == 1
    row = body.split('id="position-alice"')[1].split("</tr>")[0]
    _, n_repeated, _, n_answers = _position_by_hand(repeated)["alice"]
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells == ["1.00", str(n_answers), "0.00", str(n_repeated)]


def test_it_keeps_repeats_out_of_every_other_figure_and_the_exports(campaign, alice, bob):
    keys = list(campaign.criterion_set.criteria.values_list("key", flat=True))
    judge_rows(
        campaign,
        "judge-x",
        {
            (p, o): {k: "a" if (p.pk + len(k)) % 3 else "b" for k in keys}
            for p in Pair.objects.filter(campaign=campaign)
            for o in (True, False)
        },
    )
    for user in (alice, bob):
        work(campaign, user, always_a)
    before, exported = build_report(campaign, rounds=50), label_rows(campaign)
    # Now every original is repeated and answered the other way round: only the position figures may move.
    _repeats(campaign, gap=0)
    for user in (alice, bob):
        assert len(work(campaign, user, lambda a, key: "b")) == 8
    after = build_report(campaign, rounds=50)
    strip = {"generated_at", "human_position"}
    assert {k: v for k, v in after.items() if k not in strip} == {k: v for k, v in before.items() if k not in strip}
    assert label_rows(campaign) == exported
    assert before["human_position"]["n_repeated"] == 0 and after["human_position"]["n_repeated"] > 0
    assert {a["name"]: a["position_consistency"]["value"] for a in after["human_position"]["annotators"]} == {"alice": 0.0, "bob": 0.0}


def test_it_singles_out_a_left_leaning_annotator_through_the_claims_and_the_repeats(catalogue, django_user_model):
    """Issue 26's done-when through the real claim path: one annotator picks the article shown first 60% of
    the time (else answers like the others), so 80% in all; two others answer the truth 85% of the time."""
    users = [django_user_model.objects.create_user(name) for name in ("good1", "good2", "lefty")]
    campaign = campaign_create(
        name="Lean",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        pair_mode=Campaign.PairMode.ALL,
        overlap=3,
        annotators=users,
        rationale_min_length=5,
        repeat_rate=1.0,
        repeat_gap=1,
    )
    rng = np.random.default_rng(26)
    truth: dict[tuple[int, str], str] = {}

    def pick(a: Assignment, key: str) -> str:
        right = truth.setdefault((a.pair_id, key), "a" if rng.random() < 0.5 else "b")
        if a.annotator.username == "lefty" and rng.random() < 0.6:
            return "a" if a.a_first else "b"
        return right if rng.random() < 0.85 else ("b" if right == "a" else "a")

    for user in users:
        work(campaign, user, pick)
    assert Assignment.objects.filter(pair__campaign=campaign, repeat_of__isnull=False).count() == 3 * 12
    position = {p.rater.removeprefix("human:"): p for p in attention_flags(campaign=campaign).position}
    rates = {name: p.first_position_rate for name, p in position.items()}
    lefty, others = rates.pop("lefty"), rates.values()
    assert lefty.value == pytest.approx(0.8, abs=0.05) and all(lefty.ci_low > r.ci_high for r in others), (lefty, rates)
    assert [name for name, p in position.items() if p.lean] == ["lefty"]
    consistency = {name: p.consistency for name, p in position.items()}
    assert consistency["lefty"].value < min(c.value for name, c in consistency.items() if name != "lefty")
    assert all(c.n > 0 for c in consistency.values())
