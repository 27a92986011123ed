"""POST /work/<id>/overall/: the overall preference, saved with htmx or by a plain form."""

import pytest
from django.urls import reverse

from annotate.models import Assignment, LabelChange
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def overall_work(catalogue, alice):
    """Alice's pair in a campaign that asks for the overall preference."""
    campaign = campaign_create(
        name="Overall", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, annotators=[alice], ask_overall=True
    )
    return assignment_claim_next(campaign=campaign, user=alice)


def test_it_saves_without_javascript_and_comes_back_to_the_question(client, alice, overall_work):
    client.force_login(alice)

    response = client.post(reverse("overall-save", args=[overall_work.pk]), {"overall": "2"})

    assert response.status_code == 302
    assert response["Location"] == reverse("assignment", args=[overall_work.pk]) + "#overall"
    overall_work.refresh_from_db()
    # Stored by side: the article shown second.
    side = "b" if overall_work.a_first else "a"
    assert overall_work.overall == side
    assert LabelChange.objects.filter(assignment=overall_work, field="overall", new_value=side).count() == 1
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b'value="2" checked' in page.content and b'value="1" checked' not in page.content


def test_it_saves_by_htmx_with_a_status_fragment(client, alice, overall_work):
    client.force_login(alice)

    response = client.post(reverse("overall-save", args=[overall_work.pk]), {"overall": "1"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "<html" not in response.content.decode() and "Saved" in response.content.decode()
    assert Assignment.objects.get(pk=overall_work.pk).overall == ("a" if overall_work.a_first else "b")


def test_it_shows_the_page_with_the_error_without_javascript(client, alice, overall_work):
    client.force_login(alice)

    response = client.post(reverse("overall-save", args=[overall_work.pk]), {"overall": "maybe"})

    assert response.status_code == 422
    assert "<html" in response.content.decode() and "Choose Article 1, Article 2, Tie or Both bad." in response.content.decode()
    assert Assignment.objects.get(pk=overall_work.pk).overall == ""


def test_it_refuses_other_people(client, overall_work, bob, oscar):
    for user in (bob, oscar):
        client.force_login(user)
        assert client.post(reverse("overall-save", args=[overall_work.pk]), {"overall": "1"}).status_code == 403
    assert Assignment.objects.get(pk=overall_work.pk).overall == ""


@pytest.mark.parametrize("a_first", [True, False])
def test_it_restates_stored_overall_answers_by_side_and_back(alice, overall_work, a_first):
    """Migration 0010: answers stored by position (and their audit trail) are restated by side, and back."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("annotate.migrations.0010_overall_by_side")
    Assignment.objects.filter(pk=overall_work.pk).update(overall="1", a_first=a_first, order="ab" if a_first else "ba")
    change = LabelChange.objects.create(
        assignment=overall_work, field="overall", old_value="2", new_value="1", changed_by=alice, changed_at=overall_work.claimed_at
    )
    untouched = LabelChange.objects.create(
        assignment=overall_work, field="winner", old_value="", new_value="1", changed_by=alice, changed_at=overall_work.claimed_at
    )

    migration.by_side(apps, None)

    first, second = ("a", "b") if a_first else ("b", "a")
    assert Assignment.objects.get(pk=overall_work.pk).overall == first
    change.refresh_from_db()
    assert (change.old_value, change.new_value) == (second, first)
    untouched.refresh_from_db()
    assert untouched.new_value == "1"

    migration.by_position(apps, None)

    assert Assignment.objects.get(pk=overall_work.pk).overall == "1"
    change.refresh_from_db()
    assert (change.old_value, change.new_value) == ("2", "1")
