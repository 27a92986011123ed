"""The single-article page: blind, saves by htmx and without JavaScript, flushes, submits, refuses with 4xx."""

import pytest
from django.urls import reverse

from annotate.models import Answer, Assignment, Criterion, LabelChange, ReadingAssignment
from annotate.selectors import NOT_OF_THIS_KIND
from annotate.services.claims import assignment_claim_next
from tests.reading_campaigns import COUNT, ONE_ARTICLE, RATED_TEN, mixed_campaign, rubric
from tests.test_annotation_page import leaks

pytestmark = pytest.mark.django_db


@pytest.fixture
def reading_campaign(catalogue, alice, bob):
    return mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE, COUNT), topics=2, annotators=[alice, bob])


@pytest.fixture
def work(reading_campaign, alice):
    return assignment_claim_next(campaign=reading_campaign, user=alice)


def url(name, work, *args):
    return reverse(name, args=[work.pk, *args])


def test_it_sends_a_claim_to_the_reading_page(client, alice, reading_campaign):
    client.force_login(alice)
    response = client.post(reverse("claim-next", args=[reading_campaign.pk]))
    work = ReadingAssignment.objects.get(annotator=alice)
    assert response.status_code == 302 and response.url == url("assignment", work)
    home = client.get(reverse("home"))
    assert url("assignment", work) in home.content.decode()


def test_it_shows_the_article_alone_with_the_criteria_and_no_trace_of_its_system(client, alice, work):
    client.force_login(alice)
    response = client.get(url("assignment", work))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="column-label">Article<') == 1
    assert 'data-protocol="checklist"' in html and 'data-protocol="rating"' in html and 'data-protocol="count"' in html
    assert 'value="na"> N/A' in html and 'value="5"> 5 Excellent' in html
    assert 'Progress <strong id="progress">0 / 3</strong>' in html
    assert leaks(html) == []
    work.refresh_from_db()
    assert work.first_opened_at is not None


def test_it_keeps_every_reading_response_blind(client, alice, work):
    client.force_login(alice)
    save = url("label-save", work, "rt_style")
    responses = [
        (200, client.post(save, {"value": "4", "rationale": "Clear prose."}, HTTP_HX_REQUEST="true")),
        (422, client.post(save, {"value": "9"}, HTTP_HX_REQUEST="true")),
        (422, client.post(save, {"value": "9"})),
        (422, client.post(url("submit", work))),
        (200, client.get(url("assignment", work))),
    ]
    assert [response.status_code for _, response in responses] == [status for status, _ in responses]
    assert "Choose a point from 1 to 5." in responses[1][1].content.decode()
    assert "Not submitted yet. 2 questions still need an answer:" in responses[3][1].content.decode()
    for _, response in responses:
        assert leaks(response.content.decode()) == []


def test_it_saves_by_htmx_and_updates_the_progress(client, alice, work):
    client.force_login(alice)
    response = client.post(url("label-save", work, "ck_summary"), {"value": "yes", "rationale": "It has one."}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="save-status saved"' in html and 'data-state="complete"' in html
    assert '<strong id="progress" hx-swap-oob="true">1 / 3</strong>' in html
    assert Answer.objects.get(assignment=work).value == "yes"
    assert LabelChange.objects.filter(assignment=work, source="page").count() == 2


def test_it_saves_without_javascript_and_comes_back_to_the_criterion(client, alice, work):
    client.force_login(alice)
    response = client.post(url("label-save", work, "ct_typos"), {"value": "3", "rationale": "Three slips."})
    assert response.status_code == 302 and response.url == url("assignment", work) + "#c-ct_typos"
    assert Answer.objects.get(assignment=work).value == "3"


def test_it_flushes_with_a_bare_204_or_the_reason_as_text(client, alice, work):
    client.force_login(alice)
    ok = client.post(url("label-save", work, "rt_style"), {"value": "2", "flush": "1"})
    refused = client.post(url("label-save", work, "rt_style"), {"value": "0", "flush": "1"})
    assert (ok.status_code, ok.content) == (204, b"")
    assert refused.status_code == 422 and refused["Content-Type"].startswith("text/plain")
    assert refused.content.decode() == "Choose a point from 1 to 5."


def test_it_refuses_strangers_unknown_criteria_and_wrong_methods(client, alice, bob, rachel, work):
    assert client.get(url("assignment", work)).url.startswith(reverse("login"))
    for user in (bob, rachel):
        client.force_login(user)
        assert client.get(url("assignment", work)).status_code == 403
        assert client.post(url("label-save", work, "rt_style"), {"value": "3"}).status_code == 403
    client.force_login(alice)
    assert client.post(url("label-save", work, "nope"), {"value": "3"}).status_code == 404
    assert client.post(url("assignment", work)).status_code == 405
    assert client.get(url("submit", work)).status_code == 405
    assert not Answer.objects.exists()


def test_it_refuses_the_parts_of_the_pair_page_for_one_article(client, alice, work):
    """One address serves every kind of item; what only a pair has refuses work on one article."""
    client.force_login(alice)
    for name, args, data in (
        ("overall-save", [], {"overall": "1"}),
        ("assignment-guess", [], {"guess": "1"}),
        ("pair-flag", [], {"reason": "broken"}),
        ("span-add", [], {"position": "1", "start": "0", "end": "4"}),
        ("span-delete", [1], {}),
    ):
        response = client.post(url(name, work, *args), data)
        assert response.status_code == 403, name
        assert NOT_OF_THIS_KIND in response.content.decode(), name
    assert client.get(url("assignment-guess", work)).status_code == 403
    assert not LabelChange.objects.exists()


def test_it_keeps_the_one_article_addresses_of_earlier_releases(client, alice, work):
    client.force_login(alice)
    assert client.get(f"/reading/{work.pk}/").status_code == 200
    saved = client.post(f"/reading/{work.pk}/criteria/rt_style/", {"value": "4", "rationale": "Plain."}, HTTP_HX_REQUEST="true")
    assert saved.status_code == 200
    assert Answer.objects.get(assignment=work, criterion__key="rt_style").value == "4"
    assert client.post(f"/reading/{work.pk}/submit/").status_code == 422  # the other criteria are unanswered


def test_it_refuses_a_pairwise_criterion_on_the_reading_page(client, catalogue, alice):
    campaign = mixed_campaign(topics=1, name="Both")
    item = assignment_claim_next(campaign=campaign, user=alice)
    if item.pair.kind != "reading":
        item.status = Assignment.Status.SUBMITTED
        item.save()
        item = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    response = client.post(url("label-save", item, "pw_clear"), {"value": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "answered on a pair" in response.content.decode()


def test_it_submits_then_opens_the_next_item(client, alice, work):
    client.force_login(alice)
    for key, value in (("ck_summary", "no"), ("rt_style", "3"), ("ct_typos", "0")):
        client.post(url("label-save", work, key), {"value": value, "rationale": "Read it all."}, HTTP_HX_REQUEST="true")
    response = client.post(url("submit", work))
    work.refresh_from_db()
    assert work.status == "submitted"
    following = ReadingAssignment.objects.get(annotator=alice, status="active")
    assert response.status_code == 302 and response.url == url("assignment", following)


def test_it_shows_every_point_of_a_scale_to_ten(client, catalogue, alice):
    campaign = mixed_campaign(criterion_set=rubric("ten", RATED_TEN), topics=1, name="Ten")
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    html = client.get(url("assignment", work)).content.decode()
    assert 'value="10"> 10 Point 10' in html and 'value="0"' not in html.split("Rate it out of ten.")[1].split("</form>")[0]


def test_it_renders_the_page_in_constant_queries(client, alice, work, reading_campaign, django_assert_num_queries):
    client.force_login(alice)
    client.get(url("assignment", work))
    with django_assert_num_queries(5):
        client.get(url("assignment", work))
    for key, value in (("ck_summary", "yes"), ("rt_style", "1"), ("ct_typos", "12")):
        saved = client.post(url("label-save", work, key), {"value": value, "rationale": "Answered."}, HTTP_HX_REQUEST="true")
        assert saved.status_code == 200
    with django_assert_num_queries(5):
        client.get(url("assignment", work))
    assert Criterion.objects.filter(criterion_set=reading_campaign.criterion_set).count() == 3


def test_it_counts_the_readings_on_the_staff_campaign_page(client, catalogue, alice, bob, rachel, campaign):
    mixed = mixed_campaign(name="Counted", criterion_set=rubric("counted", ONE_ARTICLE), topics=2, overlap=2, annotators=[alice, bob])
    first = assignment_claim_next(campaign=mixed, user=alice)
    client.force_login(alice)
    for key, value in (("ck_summary", "yes"), ("rt_style", "4")):
        client.post(url("label-save", first, key), {"value": value, "rationale": "Read it all."}, HTTP_HX_REQUEST="true")
    client.post(url("submit", first))
    assert ReadingAssignment.objects.get(pk=first.pk).status == "submitted"

    client.force_login(rachel)
    html = client.get(reverse("campaign-detail", args=[mixed.pk])).content.decode()
    # Two topics, a reference and an agent article each: four readings, each wanted twice.
    assert "<strong>1 / 8</strong> one-article answers submitted" in html
    assert "0 complete, 1 started, 3 untouched (of 4)" in html
    assert 'id="readings-progress"' not in client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()


def test_it_shows_a_nominal_criterion_with_its_keys_and_saves_a_class(client, catalogue, alice, bob):
    from tests.reading_campaigns import NOMINAL, NOMINAL_CLASSES

    campaign = mixed_campaign(name="Classes", criterion_set=rubric("classes", NOMINAL), topics=1, annotators=[alice, bob])
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    html = client.get(url("assignment", work)).content.decode()
    assert 'data-protocol="nominal"' in html
    for key, name in enumerate(NOMINAL_CLASSES, start=1):
        assert f'value="{name}"> {key} {name}</label>' in html
    assert 'value="na"> N/A' in html  # the checklist whose N/A is a class offers it
    save = url("label-save", work, "nm_stance")
    assert client.post(save, {"value": "Sans réponse", "rationale": "Silent."}, HTTP_HX_REQUEST="true").status_code == 200
    assert Answer.objects.get(assignment=work, criterion__key="nm_stance").value == "Sans réponse"
    refused = client.post(save, {"value": "sans réponse", "flush": "1"})
    assert refused.status_code == 422 and refused.content.decode().startswith("Choose one of: Oui, Partiellement")


def test_it_has_a_page_for_every_kind_the_work_routes_take():
    from django.template.loader import get_template

    from annotate import selectors, views

    assert set(views.PAGES) == set(selectors.WORK_KINDS)
    for template in views.PAGES.values():
        assert get_template(template).template.source  # each is a template that loads
