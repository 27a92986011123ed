"""Campaign settings after creation (issue 41, item 6): the staff settings page, its audit trail, the
frozen plan's refusal naming the plan, full error pages, and the warning for a planned n the campaign cannot give."""

import html

import pytest
from django.urls import reverse

from annotate.models import CampaignSettingChange
from annotate.services.campaign_settings import SettingsConflict, campaign_settings_change
from annotate.services.claims import assignment_claim_next
from calibration.models import StudyPlan

pytestmark = pytest.mark.django_db

FORM = {
    "gold_rate": "0",
    "repeat_rate": "0",
    "presentation": "1",
    "reference_name": "Wikipedia",
    "alt_epsilon": "",
    "alt_epsilon_reason": "",
}


def settings_url(campaign):
    return reverse("campaign-settings", args=[campaign.pk])


def test_it_sets_the_gold_rate_after_creation_and_audits_it(client, rachel, campaign):
    client.force_login(rachel)

    response = client.post(settings_url(campaign), {**FORM, "gold_rate": "0.1"})

    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.gold_rate == 0.1
    (change,) = CampaignSettingChange.objects.filter(campaign=campaign)
    assert (change.field, change.old_value, change.new_value, change.changed_by) == ("gold_rate", 0.0, 0.1, rachel)
    page = client.get(settings_url(campaign)).content.decode()
    assert "gold rate 0.0 → 0.1" in html.unescape(page)
    assert "<td>gold_rate</td><td>0.0</td><td>0.1</td>" in page


def test_it_records_one_row_per_field_changed_and_none_when_nothing_changes(client, rachel, campaign):
    client.force_login(rachel)
    form = {**FORM, "repeat_rate": "0.2", "guess_question": "1", "reference_name": "  The   Encyclopedia ", "neutral_headings": "1"}

    assert client.post(settings_url(campaign), form).status_code == 302
    assert client.post(settings_url(campaign), form).status_code == 302

    fields = sorted(CampaignSettingChange.objects.values_list("field", flat=True))
    assert fields == ["guess_question", "neutral_headings", "reference_name", "repeat_rate"]
    campaign.refresh_from_db()
    assert campaign.reference_name == "The Encyclopedia" and campaign.neutral_headings and campaign.guess_question


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"gold_rate": "1.5"}, "The gold rate must be a share between 0 and 1"),
        ({"gold_rate": "lots"}, "The gold rate must be a number between 0 and 1, not 'lots'"),
        ({"repeat_rate": "nan"}, "The swapped-repeat rate must be a number"),
        ({"alt_epsilon": "0.15"}, "Epsilon 0.15 needs a reason"),
        ({"alt_epsilon": "2", "alt_epsilon_reason": "experts"}, "Epsilon must lie strictly between 0 and 1"),
        ({"guess_question": "1", "reference_name": "  "}, "The reference's name cannot be empty"),
    ],
)
def test_it_refuses_a_bad_value_with_400_on_the_whole_page_and_changes_nothing(client, rachel, campaign, changes, message):
    client.force_login(rachel)

    response = client.post(settings_url(campaign), {**FORM, **changes})

    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert message in page and "Nothing was changed." in page
    assert 'class="topbar"' in page  # a full page, with the navigation
    assert not CampaignSettingChange.objects.exists()


def test_it_refuses_presentation_changes_once_annotators_have_started(client, rachel, alice, campaign):
    assignment_claim_next(campaign=campaign, user=alice)

    with pytest.raises(SettingsConflict, match="Annotators have started"):
        campaign_settings_change(campaign=campaign, values={"neutral_headings": True}, by=rachel)

    client.force_login(rachel)
    page = client.get(settings_url(campaign)).content.decode()
    assert 'id="presentation-fixed"' in page and 'name="neutral_headings"' not in page
    # The rest of the form still saves: the presentation options are not in it.
    assert client.post(settings_url(campaign), {**FORM, "presentation": "", "gold_rate": "0.05"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.gold_rate == 0.05 and not campaign.neutral_headings


def freeze(client, campaign, planned_pairs="8"):
    return client.post(reverse("calibration-study-plan", args=[campaign.pk]), {"planned_pairs": planned_pairs})


def test_it_refuses_a_change_that_would_alter_the_frozen_plan_naming_the_plan(client, rachel, campaign):
    client.force_login(rachel)
    assert freeze(client, campaign).status_code == 302
    plan = StudyPlan.objects.get(campaign=campaign)

    response = client.post(settings_url(campaign), {**FORM, "gold_rate": "0.1"})

    assert response.status_code == 409
    page = html.unescape(response.content.decode())
    assert f"the study plan of 'Pilot' frozen {plan.frozen_at:%Y-%m-%d %H:%M} UTC by rachel (SHA-256 {plan.sha256[:12]}…)" in page
    assert "gold rate (0.0 in the plan)" in page
    campaign.refresh_from_db()
    assert campaign.gold_rate == 0.0 and not CampaignSettingChange.objects.exists()


def test_it_lets_a_setting_the_plan_does_not_record_change(client, rachel, campaign):
    client.force_login(rachel)
    assert freeze(client, campaign).status_code == 302

    assert client.post(settings_url(campaign), {**FORM, "repeat_rate": "0.1"}).status_code == 302

    campaign.refresh_from_db()
    assert campaign.repeat_rate == 0.1


def test_it_refuses_the_campaign_pages_epsilon_form_against_a_frozen_plan_too(client, rachel, campaign):
    client.force_login(rachel)
    assert freeze(client, campaign).status_code == 302

    response = client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "0.15", "reason": "skilled"})

    assert response.status_code == 409 and "alt-test ε (None in the plan)" in html.unescape(response.content.decode())
    campaign.refresh_from_db()
    assert campaign.alt_epsilon is None


def test_it_audits_the_campaign_pages_epsilon_form(client, rachel, campaign):
    client.force_login(rachel)

    assert client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "0.15", "reason": "skilled"}).status_code == 302

    assert sorted(CampaignSettingChange.objects.values_list("field", "new_value")) == [
        ("alt_epsilon", 0.15),
        ("alt_epsilon_reason", "skilled"),
    ]


def test_it_answers_a_refused_freeze_with_the_whole_page(client, rachel, campaign):
    client.force_login(rachel)
    assert freeze(client, campaign).status_code == 302

    again = freeze(client, campaign, "20")

    assert again.status_code == 409
    assert again["Content-Type"].startswith("text/html")
    page = html.unescape(again.content.decode())
    assert "already has a frozen study plan" in page and 'class="topbar"' in page and 'id="study-plan-refused"' in page


def test_it_warns_of_a_planned_n_larger_than_the_campaign_can_give(client, rachel, campaign):
    client.force_login(rachel)

    response = freeze(client, campaign, "50")

    assert response.status_code == 302
    page = html.unescape(client.get(response["Location"]).content.decode())
    assert "The plan counts on 50 pairs, but this campaign has 8 pairs" in page
    assert 'id="planned-pairs-warning"' in page


def test_it_does_not_warn_of_a_planned_n_the_campaign_can_give(client, rachel, campaign):
    client.force_login(rachel)

    page = client.get(freeze(client, campaign, "8")["Location"]).content.decode()

    assert "planned-pairs-warning" not in page


def test_it_answers_a_missing_page_with_a_full_page(client, rachel):
    client.force_login(rachel)

    response = client.get("/campaigns/999999/settings/")

    assert response.status_code == 404 and 'class="topbar"' in response.content.decode()
