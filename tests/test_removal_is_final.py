"""Removal is final: an annotator taken off a campaign writes nothing more to it, on any route, submitted pairs
included, and is told why. Also with a save racing the removal, in real threads (SQLite and PostgreSQL)."""

import threading
import time

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Assignment, Criterion, Label, LabelChange, Span
from annotate.rendering import plain_text
from annotate.selectors import REMOVED_FROM_CAMPAIGN
from annotate.services.answers import label_save, overall_save
from annotate.services.campaigns import campaign_annotator_remove, campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit, span_add
from interchange import REMOVED_COLUMN, label_rows, overall_rows, span_rows
from protocols.pairwise import FIRST, SIDE_A, side_of

HTMX = {"HTTP_HX_REQUEST": "true"}
SYSTEMS = ["wikipedia", "atlas_agent", "quill_researcher"]


@pytest.fixture
def overall_campaign(catalogue, alice, bob):
    return campaign_create(
        name="Final", criterion_set=catalogue, systems=SYSTEMS, overlap=2, annotators=[alice, bob], ask_overall=True, rationale_min_length=5
    )


def first_passage(assignment: Assignment) -> dict:
    """A passage of the article alice sees first, as the page would send it."""
    pair = assignment.pair
    article = pair.article_a if side_of(FIRST, assignment.a_first) == SIDE_A else pair.article_b
    text = plain_text(article.html)
    return {"position": FIRST, "start": 0, "end": 12, "quote": text[:12], "polarity": 1}


def answered(campaign, user, *, submit: bool) -> Assignment:
    """A pair of `user` with every criterion, the overall answer and a passage: submitted, or still in progress."""
    work = assignment_claim_next(campaign=campaign, user=user)
    for criterion in Criterion.objects.filter(criterion_set=campaign.criterion_set):
        label_save(assignment=work, criterion=criterion, user=user, position="1", rationale="first thoughts")
    overall_save(assignment=work, user=user, value="1")
    span_add(assignment=work, **first_passage(work))
    if submit:
        assignment_submit(assignment=work, user=user)
    return work


def stored(campaign) -> tuple:
    """Everything the campaign's export holds (but the flag a removal sets), and the audit trail."""

    def unflagged(rows) -> list[dict]:
        return [{k: v for k, v in row.items() if k != REMOVED_COLUMN} for row in rows]

    return (
        unflagged(label_rows(campaign)),
        unflagged(overall_rows(campaign)),
        unflagged(span_rows(campaign)),
        list(LabelChange.objects.order_by("pk").values_list("pk", "field", "new_value")),
    )


def page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


# Every write route of the annotation page and of the API, with a request that succeeds while alice is a member.
WRITES = {
    "page label save": lambda a, w: page(a).post(
        reverse("label-save", args=[w.pk, "ww_cc_1"]), {"position": "2", "rationale": "second thoughts"}
    ),
    "htmx label save": lambda a, w: page(a).post(reverse("label-save", args=[w.pk, "ww_cc_1"]), {"rationale": "second thoughts"}, **HTMX),
    "api label put": lambda a, w: api(a).put(
        reverse("api:label-save", args=[w.pk, "ww_cc_1"]), {"position": "2", "rationale": "second thoughts"}, format="json"
    ),
    "api label patch": lambda a, w: api(a).patch(
        reverse("api:label-save", args=[w.pk, "ww_cc_1"]), {"rationale": "second thoughts"}, format="json"
    ),
    "page overall": lambda a, w: page(a).post(reverse("overall-save", args=[w.pk]), {"overall": "2"}),
    "htmx overall": lambda a, w: page(a).post(reverse("overall-save", args=[w.pk]), {"overall": "tie"}, **HTMX),
    "api overall": lambda a, w: api(a).put(reverse("api:overall-save", args=[w.pk]), {"overall": "2"}, format="json"),
    "span add": lambda a, w: page(a).post(
        reverse("span-add", args=[w.pk]), {**first_passage(w), "polarity": -1, "comment": "again"}, **HTMX
    ),
    "span delete": lambda a, w: page(a).post(reverse("span-delete", args=[w.pk, w.spans.get().pk]), **HTMX),
    "span delete without js": lambda a, w: page(a).post(reverse("span-delete", args=[w.pk, w.spans.get().pk])),
    "page submit": lambda a, w: page(a).post(reverse("submit", args=[w.pk])),
    "api submit": lambda a, w: api(a).post(reverse("api:assignment-submit", args=[w.pk])),
}


def refusal_text(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return response.json()["detail"]
    return response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("submit", [True, False], ids=["submitted", "in progress"])
@pytest.mark.parametrize("route", list(WRITES))
def test_it_refuses_every_write_of_a_removed_annotator(route, submit, overall_campaign, alice, rachel):
    work = answered(overall_campaign, alice, submit=submit)
    before = stored(overall_campaign)

    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    after_removal = stored(overall_campaign)
    response = WRITES[route](alice, work)

    assert response.status_code == 403, response.content[:300]
    assert REMOVED_FROM_CAMPAIGN in refusal_text(response)
    assert "session" not in refusal_text(response)
    assert stored(overall_campaign) == after_removal
    # The removal itself changed no label, passage or overall answer (only an audit row for work in progress).
    assert after_removal[:3] == before[:3]


@pytest.mark.django_db
def test_it_answers_htmx_with_the_reason_alone(overall_campaign, alice, rachel):
    work = answered(overall_campaign, alice, submit=True)
    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    response = WRITES["htmx label save"](alice, work)
    assert response.status_code == 403
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == REMOVED_FROM_CAMPAIGN


@pytest.mark.django_db
@pytest.mark.parametrize("submit", [True, False], ids=["submitted", "in progress"])
def test_it_closes_the_removed_annotators_pairs_to_reading_too(submit, overall_campaign, alice, rachel):
    work = answered(overall_campaign, alice, submit=submit)
    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    shown = page(alice).get(reverse("assignment", args=[work.pk]))
    assert shown.status_code == 403 and REMOVED_FROM_CAMPAIGN in shown.content.decode()
    detail = api(alice).get(reverse("api:assignment-detail", args=[work.pk]))
    assert detail.status_code == 403 and detail.json()["detail"] == REMOVED_FROM_CAMPAIGN
    assert api(alice).get(reverse("api:assignment-list")).json()["count"] == 0
    assert b"Final" not in page(alice).get(reverse("home")).content


@pytest.mark.django_db
def test_it_tells_a_removed_annotator_asking_for_work_why(overall_campaign, alice, oscar, rachel):
    answered(overall_campaign, alice, submit=True)
    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    claim = page(alice).post(reverse("claim-next", args=[overall_campaign.pk]))
    assert claim.status_code == 403 and REMOVED_FROM_CAMPAIGN in claim.content.decode()
    for response in (
        api(alice).post(reverse("api:campaign-claim", args=[overall_campaign.pk])),
        api(alice).get(reverse("api:campaign-detail", args=[overall_campaign.pk])),
    ):
        assert response.status_code == 403 and response.json()["detail"] == REMOVED_FROM_CAMPAIGN
    # Somebody never on the campaign is told just that.
    outsider = api(oscar).post(reverse("api:campaign-claim", args=[overall_campaign.pk]))
    assert outsider.status_code == 403 and outsider.json()["detail"] == "You are not an annotator of this campaign."


@pytest.mark.django_db
def test_it_refuses_a_service_call_holding_the_assignment_from_before_the_removal(overall_campaign, alice, rachel):
    """The check is made under the assignment's lock, not on what a view read earlier."""
    work = answered(overall_campaign, alice, submit=True)
    criterion = Criterion.objects.get(criterion_set=overall_campaign.criterion_set, key="ww_cc_1")
    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    assert work.status == Assignment.Status.SUBMITTED  # the object a view would still hold
    for write in (
        lambda: label_save(assignment=work, criterion=criterion, user=alice, rationale="second thoughts"),
        lambda: overall_save(assignment=work, user=alice, value="2"),
        lambda: span_add(assignment=work, **first_passage(work)),
    ):
        with pytest.raises(PermissionDenied, match="You were removed from this campaign"):
            write()
    assert Label.objects.get(assignment=work, criterion=criterion).rationale == "first thoughts"
    assert Span.objects.filter(assignment=work).count() == 1


@pytest.mark.django_db
def test_it_lets_bob_amend_his_submitted_pair_and_alice_again_once_added_back(overall_campaign, alice, bob, rachel):
    from annotate.services.campaigns import campaign_annotators_add

    alices = answered(overall_campaign, alice, submit=True)
    bobs = answered(overall_campaign, bob, submit=True)
    campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
    assert WRITES["api label put"](bob, bobs).status_code == 200
    campaign_annotators_add(campaign=overall_campaign, users=[alice], by=rachel)
    assert WRITES["api label put"](alice, alices).status_code == 200


# --- a save racing the removal, in real threads ------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_lets_no_save_land_after_the_removal_returns(overall_campaign, alice, rachel):
    """Six clients keep amending alice's submitted pair through the page and the API while rachel
    removes her and adds her back, eight times. Each time, what the export holds when the removal
    returns is what it holds until she is added back, no save that began after the removal returned
    and ended before she was back got through, and every save answered 200 is in the audit trail."""
    from annotate.services.campaigns import campaign_annotators_add

    work = answered(overall_campaign, alice, submit=True)
    url_api = reverse("api:label-save", args=[work.pk, "ww_cc_1"])
    url_page = reverse("label-save", args=[work.pk, "ww_cc_1"])
    cycles = 8
    outcomes: list[tuple[float, float, int]] = []  # (began, ended, status) of every save
    removals: list[tuple[float, float]] = []  # (removal returned, adding back began)
    drifted: list[int] = []  # cycles whose export changed while alice was removed
    done = threading.Event()
    start = threading.Barrier(7)
    errors: list[BaseException] = []

    def saver(n: int) -> None:
        from django.db import connections

        client = api(alice) if n % 2 else page(alice)
        try:
            start.wait()
            i = 0
            while not done.is_set():
                i += 1
                began, text = time.monotonic(), f"amendment {n}-{i}"
                if n % 2:
                    status = client.put(url_api, {"rationale": text}, format="json").status_code
                else:
                    status = client.post(url_page, {"rationale": text}, **HTMX).status_code
                outcomes.append((began, time.monotonic(), status))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    def remover() -> None:
        from django.db import connections

        try:
            start.wait()
            for cycle in range(cycles):
                time.sleep(0.15)  # the savers are in full swing
                campaign_annotator_remove(campaign=overall_campaign, user=alice, by=rachel)
                removed_at = time.monotonic()
                snapshot = stored(overall_campaign)
                time.sleep(0.15)
                if stored(overall_campaign) != snapshot:
                    drifted.append(cycle)
                removals.append((removed_at, time.monotonic()))
                campaign_annotators_add(campaign=overall_campaign, users=[alice], by=rachel)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()
            connections.close_all()

    threads = [threading.Thread(target=saver, args=(n,)) for n in range(6)] + [threading.Thread(target=remover)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors

    assert len(removals) == cycles and drifted == []
    assert {status for _, _, status in outcomes} == {200, 403}
    accepted = [(began, ended) for began, ended, status in outcomes if status == 200]
    assert not [(began, ended) for began, ended in accepted for removed, back in removals if removed < began and ended < back]
    changes = LabelChange.objects.filter(assignment=work, criterion__key="ww_cc_1", field="rationale")
    assert changes.count() == 1 + len(accepted)
    assert Label.objects.get(assignment=work, criterion__key="ww_cc_1").rationale == changes.latest("pk").new_value
