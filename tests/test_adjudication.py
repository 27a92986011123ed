"""Adjudication: roles, the queue's selection, the adjudicator's page (no judge anywhere), the final
answer through the answer service (source "adjudicated"), and the source of every other path."""

import pytest
from django.core.management import call_command
from django.test import Client

from annotate.adjudication_selectors import adjudicated_answers
from annotate.models import Adjudication, Assignment, Criterion, LabelChange
from annotate.services.adjudication import adjudication_open, campaign_adjudicators_add
from annotate.services.answers import label_save
from annotate.services.campaigns import campaign_annotators_add, campaign_set_open
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from judges.models import JudgeUnit, JudgeVerdict
from judges.services import judge_create, judge_run_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def dana(django_user_model):
    """An adjudicator: not an annotator of the campaign."""
    return django_user_model.objects.create_user("dana", password="dana-password")


def submit_all(assignment, positions: dict[str, str]) -> None:
    """Answers every criterion (position by key, default "1"), as its annotator on the page, and submits."""
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set):
        label_save(
            assignment=assignment,
            criterion=criterion,
            user=assignment.annotator,
            position=positions.get(criterion.key, "1"),
            rationale=f"{assignment.annotator.username} reasons on {criterion.key}",
        )
    assignment_submit(assignment=assignment, user=assignment.annotator)


def side(assignment, position):
    return {"1": "a" if assignment.a_first else "b", "2": "b" if assignment.a_first else "a", "tie": "tie"}[position]


def position(assignment, wanted_side):
    return next(p for p in ("1", "2", "tie") if side(assignment, p) == wanted_side)


@pytest.fixture
def disputed(campaign, alice, bob, dana, rachel):
    """alice and bob on one pair: they split (a vs b) on the first criterion, tie against a win on the second,
    agree on the rest. dana adjudicates."""
    campaign.allow_tie = True
    campaign.save()
    first = assignment_claim_next(campaign=campaign, user=alice)
    second = assignment_claim_next(campaign=campaign, user=bob)
    assert first.pair_id == second.pair_id
    c1, c2 = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order")[:2]
    submit_all(first, {c1.key: position(first, "a"), c2.key: position(first, "a")} | agreeing(campaign, first, (c1, c2)))
    submit_all(second, {c1.key: position(second, "b"), c2.key: "tie"} | agreeing(campaign, second, (c1, c2)))
    campaign_adjudicators_add(campaign=campaign, users=[dana])
    return {"pair": first.pair, "split": c1, "tie": c2, "alice": first, "bob": second}


def agreeing(campaign, assignment, skip):
    return {c.key: position(assignment, "a") for c in Criterion.objects.filter(criterion_set=campaign.criterion_set) if c not in skip}


def test_it_selects_items_by_kind_and_criterion(disputed, campaign, rachel):
    assert adjudication_open(campaign=campaign, by=rachel, kind="split") == (1, 0)
    assert set(Adjudication.objects.values_list("criterion_id", "kind")) == {(disputed["split"].pk, "split")}
    assert adjudication_open(campaign=campaign, by=rachel, criteria=[disputed["tie"]], kind="split") == (0, 0)
    assert adjudication_open(campaign=campaign, by=rachel, kind="tie-vs-win") == (1, 0)
    assert adjudication_open(campaign=campaign, by=rachel) == (0, 2)
    assert set(Adjudication.objects.values_list("criterion_id", "kind")) == {
        (disputed["split"].pk, "split"),
        (disputed["tie"].pk, "tie-vs-win"),
    }


def test_it_opens_from_the_command_and_names_bad_criteria(disputed, campaign, rachel, capsys):
    call_command("open_adjudication", "--campaign", campaign.name, "--criteria", disputed["tie"].key, "--kind", "all")
    assert "1 item(s) opened" in capsys.readouterr().out
    assert list(Adjudication.objects.values_list("criterion_id", flat=True)) == [disputed["tie"].pk]
    with pytest.raises(Exception, match="Not a criterion"):
        call_command("open_adjudication", "--campaign", campaign.name, "--criteria", "nope")


def test_it_keeps_adjudicators_and_annotators_apart(disputed, campaign, alice, dana):
    with pytest.raises(Exception, match="Annotators of this campaign cannot adjudicate"):
        campaign_adjudicators_add(campaign=campaign, users=[alice])
    with pytest.raises(Exception, match="Adjudicators of this campaign cannot annotate"):
        campaign_annotators_add(campaign=campaign, users=[dana])
    client = Client()
    client.force_login(dana)
    assert client.post(f"/campaigns/{campaign.pk}/next/").status_code == 403


def open_item(campaign, rachel, criterion):
    adjudication_open(campaign=campaign, by=rachel, criteria=[criterion])
    return Adjudication.objects.get(criterion=criterion)


def test_it_shows_the_answers_and_rationales_but_no_judge(disputed, campaign, rachel, dana):
    judge, _ = judge_create(name="secretive-judge", kind="length")
    run = judge_run_create(campaign=campaign, judge=judge)
    unit = JudgeUnit.objects.create(
        run=run, judge=judge, pair=disputed["pair"], a_first=True, order="ab", category=disputed["split"].category, status="done"
    )
    JudgeVerdict.objects.create(unit=unit, criterion=disputed["split"], winner="a", rationale="JUDGE-VERDICT-TEXT")
    item = open_item(campaign, rachel, disputed["split"])
    client = Client()
    client.force_login(dana)
    response = client.get(f"/adjudicate/{item.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f"alice reasons on {disputed['split'].key}" in page and f"bob reasons on {disputed['split'].key}" in page
    assert "Annotator 1" in page and "Annotator 2" in page
    for secret in ("secretive-judge", "JUDGE-VERDICT-TEXT", ">alice<", ">bob<", "wikipedia", "atlas_agent", "quill_researcher"):
        assert secret not in page


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"position": "3", "reason": "because"}, "Choose Article 1, Article 2"),
        ({"position": "1", "reason": "  "}, "Give the reason"),
        ({"reason": "because"}, "Choose the final answer"),
    ],
)
def test_it_refuses_a_bad_final_answer_with_400(disputed, campaign, rachel, dana, data, message):
    item = open_item(campaign, rachel, disputed["split"])
    client = Client()
    client.force_login(dana)
    response = client.post(f"/adjudicate/{item.pk}/", data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Adjudication.objects.get(pk=item.pk).winner == ""


def test_it_refuses_a_tie_where_the_protocol_does(disputed, campaign, rachel, dana):
    item = open_item(campaign, rachel, disputed["split"])
    campaign.allow_tie = False
    campaign.save()
    client = Client()
    client.force_login(dana)
    response = client.post(f"/adjudicate/{item.pk}/", {"position": "tie", "reason": "even"})
    assert response.status_code == 400 and "does not allow ties" in response.content.decode()


def test_it_records_the_final_answer_with_source_adjudicated_once(disputed, campaign, rachel, dana, oscar):
    item = open_item(campaign, rachel, disputed["split"])
    client = Client()
    client.force_login(dana)
    response = client.post(f"/adjudicate/{item.pk}/", {"position": "2", "reason": "Article 2 covers it"})
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.winner == ("b" if item.a_first else "a") and item.decided_by == dana
    changes = LabelChange.objects.filter(adjudication=item)
    assert sorted(changes.values_list("field", "new_value", "source")) == [
        ("rationale", "Article 2 covers it", "adjudicated"),
        ("winner", item.winner, "adjudicated"),
    ]
    again = client.post(f"/adjudicate/{item.pk}/", {"position": "1", "reason": "changed my mind"})
    assert again.status_code == 409 and "already adjudicated by someone else" in again.content.decode()
    assert Adjudication.objects.get(pk=item.pk).winner == item.winner
    selected = adjudicated_answers(campaign)
    assert selected.n == 1 and selected.answers == {(disputed["pair"].pk, disputed["split"].key): item.winner}


@pytest.mark.parametrize(
    ("kind", "status"), [("anonymous", 302), ("annotator", 403), ("outsider", 403), ("staff", 403), ("adjudicator", 200)]
)
def test_it_lets_only_adjudicators_open_an_item(disputed, campaign, rachel, dana, alice, oscar, kind, status):
    item = open_item(campaign, rachel, disputed["split"])
    users = {"anonymous": None, "annotator": alice, "outsider": oscar, "staff": rachel, "adjudicator": dana}
    client = Client()
    if users[kind]:
        client.force_login(users[kind])
    assert client.get(f"/adjudicate/{item.pk}/").status_code == status
    assert client.post(f"/adjudicate/{item.pk}/", {"position": "1", "reason": "r"}).status_code in (status, 302, 400)
    if kind == "adjudicator":
        assert client.get("/adjudicate/999999999/").status_code == 404
        assert client.delete(f"/adjudicate/{item.pk}/").status_code == 405
    assert client.get(f"/campaigns/{campaign.pk}/adjudication/").status_code == {"staff": 200, "adjudicator": 200}.get(kind, status)


def test_it_records_the_source_of_each_path(campaign, alice, rachel, tmp_path):
    from interchange.export import label_rows  # noqa: F401 (the import path exists)

    page_work = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    client = Client()
    client.force_login(alice)
    client.post(f"/work/{page_work.pk}/criteria/{criterion.key}/", {"position": "1", "rationale": "from the page"})
    assert LabelChange.objects.get(assignment=page_work, field="rationale").source == "page"
    client.put(
        f"/api/assignments/{page_work.pk}/labels/{criterion.key}/",
        '{"position": "2", "rationale": "from the api"}',
        content_type="application/json",
    )
    assert set(LabelChange.objects.filter(assignment=page_work, new_value="from the api").values_list("source", flat=True)) == {"api"}
    assert Assignment.objects.filter(pk=page_work.pk).exists()


def test_it_records_import_as_the_source_of_imported_work(campaign, bob):
    from django.utils import timezone

    from annotate.services.answers import ImportedWork, answers_import

    pair = campaign.pairs.first()
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    work = ImportedWork(
        key=1,
        pair_id=pair.pk,
        annotator_id=bob.pk,
        order="ab",
        order_known=True,
        started_at=None,
        stored=None,
        labels=[(criterion.pk, "a", "imported reason", None)],
    )
    answers_import(work=[work], now=timezone.now())
    assert set(LabelChange.objects.filter(assignment__annotator=bob).values_list("source", flat=True)) == {"import"}


def test_it_refuses_a_final_answer_on_a_closed_campaign_with_409(disputed, campaign, rachel, dana):
    item = open_item(campaign, rachel, disputed["split"])
    campaign_set_open(campaign=campaign, is_open=False)
    client = Client()
    client.force_login(dana)
    response = client.post(f"/adjudicate/{item.pk}/", {"position": "1", "reason": "Article 1 covers it"})
    assert response.status_code == 409 and "This campaign is closed" in response.content.decode()
    assert Adjudication.objects.get(pk=item.pk).winner == "" and not LabelChange.objects.filter(adjudication=item).exists()
    campaign_set_open(campaign=campaign, is_open=True)
    assert client.post(f"/adjudicate/{item.pk}/", {"position": "1", "reason": "Article 1 covers it"}).status_code == 302
