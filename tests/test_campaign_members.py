"""Who may annotate a campaign: adding and removing annotators on the campaign page, and what a closed campaign tells its members."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Assignment, Criterion, Label, LabelChange
from annotate.selectors import can_annotate
from annotate.services.answers import label_save
from annotate.services.campaigns import (
    campaign_annotator_remove,
    campaign_annotators_add,
    campaign_create,
    campaign_set_open,
)
from annotate.services.claims import CAMPAIGN_CLOSED, assignment_claim_next

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
SYSTEMS = ["wikipedia", "atlas_agent", "quill_researcher"]


def members_url(campaign):
    return reverse("campaign-members", args=[campaign.pk])


def add_url(campaign):
    return reverse("campaign-members-add", args=[campaign.pk])


def remove_url(campaign, user):
    return reverse("campaign-member-remove", args=[campaign.pk, user.pk])


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def alices_work(campaign, alice):
    """Alice holds a pair in progress with one label saved."""
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key="ww_cc_1")
    label_save(assignment=assignment, criterion=criterion, user=alice, position="1", rationale="clearer prose")
    return assignment


@pytest.fixture
def open_campaign(catalogue):
    """No annotator list: every non-staff account may annotate."""
    return campaign_create(name="Open", criterion_set=catalogue, systems=SYSTEMS, overlap=2)


# --- the member list -----------------------------------------------------------------


def test_it_lists_members_with_their_progress(client, rachel, alice, bob, campaign, alices_work, django_assert_max_num_queries):
    client.force_login(rachel)
    with django_assert_max_num_queries(5):
        response = client.get(members_url(campaign))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Annotators of Pilot</h1>" in html
    assert '<td>alice</td>\n        <td>annotator</td>\n        <td class="num">0</td>\n        <td class="num">1</td>' in html
    assert "<td>bob</td>" in html and remove_url(campaign, alice) in html

    fragment = client.get(members_url(campaign), **HTMX)
    assert fragment.status_code == 200 and fragment.content.decode().lstrip().startswith('<section id="members">')
    assert b"<h1>" not in fragment.content

    # The campaign page fetches the list in place, and links to it for browsers without JavaScript.
    detail = client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    assert f'hx-get="{members_url(campaign)}"' in detail and f'href="{members_url(campaign)}"' in detail


def test_it_keeps_the_member_forms_from_everybody_but_staff(client, alice, oscar, campaign):
    urls = [add_url(campaign), remove_url(campaign, alice)]
    response = client.get(members_url(campaign))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client.post(urls[0], {"usernames": "oscar"}).status_code == 302
    for user in (alice, oscar):
        client.force_login(user)
        assert client.get(members_url(campaign)).status_code == 403
        assert client.post(add_url(campaign), {"usernames": "oscar"}).status_code == 403
        assert client.post(remove_url(campaign, alice), {"confirm": "yes"}).status_code == 403
    assert not can_annotate(campaign, oscar) and can_annotate(campaign, alice)


# --- adding --------------------------------------------------------------------------------


def test_it_adds_annotators_by_username(client, rachel, oscar, campaign, django_user_model):
    dora = django_user_model.objects.create_user("dora")
    client.force_login(rachel)
    response = client.post(add_url(campaign), {"usernames": "oscar,\ndora"})
    assert response.status_code == 302 and response["Location"] == members_url(campaign)
    assert "Added to Pilot: oscar, dora." in client.get(response["Location"]).content.decode()
    assert can_annotate(campaign, oscar) and can_annotate(campaign, dora)

    again = client.post(add_url(campaign), {"usernames": "dora"}, **HTMX)
    assert again.status_code == 200 and b"Nothing changed" in again.content and b"<h1>" not in again.content


def test_it_names_unknown_usernames_and_adds_nobody(client, rachel, oscar, campaign):
    client.force_login(rachel)
    for headers in ({}, HTMX):
        response = client.post(add_url(campaign), {"usernames": "oscar, nobody, ghost"}, **headers)
        assert response.status_code == 422
        assert "No account with the username(s): nobody, ghost." in response.content.decode()
        assert (b"<h1>" in response.content) == (not headers)
    assert client.post(add_url(campaign), {"usernames": " , "}).status_code == 422
    assert not can_annotate(campaign, oscar)


def test_it_will_not_list_staff_on_a_campaign_open_to_everybody(client, rachel, oscar, open_campaign):
    client.force_login(rachel)
    response = client.post(add_url(open_campaign), {"usernames": "rachel"})
    assert response.status_code == 422 and b"would shut everybody else out" in response.content
    assert not open_campaign.annotators.exists() and can_annotate(open_campaign, oscar)


# --- removing ------------------------------------------------------------------------------


def test_it_asks_before_removing_without_javascript(client, rachel, alice, campaign, alices_work):
    client.force_login(rachel)
    response = client.post(remove_url(campaign, alice))
    html = response.content.decode()
    assert response.status_code == 200 and "Remove alice from Pilot?" in html
    assert "their 1 pair in progress closes to them" in html and 'name="confirm" value="yes"' in html
    assert can_annotate(campaign, alice)
    alices_work.refresh_from_db()
    assert alices_work.status == Assignment.Status.ACTIVE


def test_it_ends_alices_access_at_once_and_keeps_her_labels(client, rachel, alice, bob, campaign, alices_work):
    staff = client
    staff.force_login(rachel)
    response = staff.post(remove_url(campaign, alice), {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == members_url(campaign)
    assert "Removed alice from Pilot; 1 pair(s) in progress are closed to them." in staff.get(response["Location"]).content.decode()

    alices_work.refresh_from_db()
    assert alices_work.status == Assignment.Status.REVOKED
    audit = LabelChange.objects.filter(assignment=alices_work, field="status").last()
    assert (audit.old_value, audit.new_value, audit.changed_by) == ("active", "revoked", rachel)
    assert list(campaign.removed_annotators.all()) == [alice] and list(campaign.annotators.all()) == [bob]

    api = api_for(alice)
    alice_client = type(client)()
    alice_client.force_login(alice)
    assert alice_client.get(reverse("assignment", args=[alices_work.pk])).status_code == 403
    save = reverse("label-save", args=[alices_work.pk, "ww_cc_1"])
    assert alice_client.post(save, {"position": "2"}, **HTMX).status_code == 403
    assert api.put(reverse("api:label-save", args=[alices_work.pk, "ww_cc_1"]), {"position": "2"}, format="json").status_code == 403
    assert alice_client.post(reverse("claim-next", args=[campaign.pk])).status_code == 403
    assert api.post(reverse("api:campaign-claim", args=[campaign.pk])).status_code == 403
    assert b"Pilot" not in alice_client.get(reverse("home")).content

    label = Label.objects.get(assignment=alices_work)
    assert (label.winner, label.rationale) == (Label.Winner.A if alices_work.a_first else Label.Winner.B, "clearer prose")
    # Bob works on as before.
    assert assignment_claim_next(campaign=campaign, user=bob) is not None


def test_it_gives_alice_her_work_back_when_she_is_added_again(client, rachel, alice, campaign, alices_work):
    client.force_login(rachel)
    client.post(remove_url(campaign, alice), {"confirm": "yes"}, **HTMX)
    members = client.get(members_url(campaign)).content.decode()
    assert "<td>removed</td>" in members and "Add back" in members

    response = client.post(add_url(campaign), {"usernames": "alice"}, **HTMX)
    assert response.status_code == 200 and b"Added to Pilot: alice." in response.content
    assert not campaign.removed_annotators.exists() and campaign.annotators.filter(pk=alice.pk).exists()
    back = assignment_claim_next(campaign=campaign, user=alice)
    assert back.pk == alices_work.pk and back.status == Assignment.Status.ACTIVE
    assert Label.objects.get(assignment=back).rationale == "clearer prose"


def test_it_removes_from_a_campaign_open_to_everybody(client, rachel, alice, bob, oscar, open_campaign):
    work = assignment_claim_next(campaign=open_campaign, user=alice)
    client.force_login(rachel)
    response = client.post(remove_url(open_campaign, alice), {"confirm": "yes"}, **HTMX)
    assert response.status_code == 200 and b"<td>removed</td>" in response.content
    assert not open_campaign.annotators.exists()  # still open to everybody else
    assert not can_annotate(open_campaign, alice)
    assert can_annotate(open_campaign, bob) and can_annotate(open_campaign, oscar)
    work.refresh_from_db()
    assert work.status == Assignment.Status.REVOKED

    campaign_annotators_add(campaign=open_campaign, users=[alice], by=rachel)
    assert not open_campaign.annotators.exists() and can_annotate(open_campaign, alice)
    assert assignment_claim_next(campaign=open_campaign, user=alice).pk == work.pk


def test_it_keeps_a_campaign_shut_when_its_last_annotator_leaves(rachel, alice, bob, oscar, catalogue):
    solo = campaign_create(name="Solo", criterion_set=catalogue, systems=SYSTEMS, annotators=[alice])
    campaign_annotator_remove(campaign=solo, user=alice, by=rachel)
    assert not can_annotate(solo, alice)
    assert not can_annotate(solo, bob) and not can_annotate(solo, oscar)


def test_it_leaves_submitted_work_submitted(rachel, alice, campaign):
    first = assignment_claim_next(campaign=campaign, user=alice)
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.SUBMITTED)
    second = assignment_claim_next(campaign=campaign, user=alice)
    assert campaign_annotator_remove(campaign=campaign, user=alice, by=rachel) == 1
    statuses = dict(Assignment.objects.filter(annotator=alice).values_list("pk", "status"))
    assert statuses == {first.pk: Assignment.Status.SUBMITTED, second.pk: Assignment.Status.REVOKED}
    # Twice is harmless.
    assert campaign_annotator_remove(campaign=campaign, user=alice, by=rachel) == 0


# --- a closed campaign -----------------------------------------------------------------------


def test_it_tells_members_that_the_campaign_is_closed(client, alice, campaign):
    campaign_set_open(campaign=campaign, is_open=False)
    client.force_login(alice)
    page = client.post(reverse("claim-next", args=[campaign.pk]))
    assert page.status_code == 409
    assert b"Pilot is closed" in page.content and CAMPAIGN_CLOSED.encode() in page.content
    api = api_for(alice).post(reverse("api:campaign-claim", args=[campaign.pk]))
    assert api.status_code == 409 and api.json() == {"detail": CAMPAIGN_CLOSED}
    assert not Assignment.objects.exists()


def test_it_still_refuses_outsiders_of_a_closed_campaign(client, oscar, rachel, alice, campaign):
    campaign_set_open(campaign=campaign, is_open=False)
    campaign_annotator_remove(campaign=campaign, user=alice, by=rachel)
    for user in (oscar, rachel, alice):
        client.force_login(user)
        page = client.post(reverse("claim-next", args=[campaign.pk]))
        assert page.status_code == 403 and b"closed" not in page.content
        assert api_for(user).post(reverse("api:campaign-claim", args=[campaign.pk])).status_code == 403
