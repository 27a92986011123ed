"""The blindness audit of a campaign: the blindness_report command and the staff page."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.blindness_selectors import campaign_blindness_samples
from annotate.services.campaigns import campaign_create

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    out = io.StringIO()
    call_command("blindness_report", *args, stdout=out)
    return out.getvalue()


def test_it_takes_each_article_once_however_many_pairs_show_it(campaign):
    samples = campaign_blindness_samples(campaign=campaign)
    # 8 pairs (the reference against two agents on 4 topics) show 12 distinct articles.
    assert campaign.pairs.count() == 8 and len(samples) == 12
    assert sum(s.is_reference for s in samples) == 4
    assert {s.system for s in samples if s.is_reference} == {"wikipedia"}


def test_it_prints_a_markdown_table_with_n_per_system(campaign):
    out = _run("--campaign", "Pilot")
    assert out.startswith("# Blindness audit: Pilot")
    assert "| | wikipedia (ref) | atlas_agent | quill_researcher |" in out
    assert "| n articles | 4 | 4 | 4 |" in out
    assert "n = 12 articles on 4 topics" in out
    assert "95% CI" in out


def test_it_prints_json_for_scripts(campaign):
    data = json.loads(_run("--campaign", "Pilot", "--format", "json"))
    assert data["campaign"] == "Pilot" and data["n_articles"] == 12 and data["n_topics"] == 4
    assert 0 <= data["guessability"]["low"] <= data["guessability"]["accuracy"] <= data["guessability"]["high"] <= 1
    systems = {row["key"]: row for row in data["systems"]}
    assert systems["wikipedia"]["is_reference"] and systems["wikipedia"]["guessability"] is None
    assert systems["atlas_agent"]["guessability"]["n_articles"] == 8
    assert {"words", "numbered_headings", "bullet_share"} <= set(systems["atlas_agent"]["means"])
    assert len(data["separation"]) == len(data["features"])


def test_it_says_not_enough_topics_for_a_small_campaign(catalogue):
    campaign_create(name="Tiny", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2)
    assert "not enough topics (2; at least 4 needed)" in _run("--campaign", "Tiny")
    data = json.loads(_run("--campaign", "Tiny", "--format", "json"))
    assert data["guessability"]["accuracy"] is None


def test_it_refuses_an_unknown_campaign(db):
    with pytest.raises(CommandError, match="No campaign named 'Nope'"):
        _run("--campaign", "Nope")


def test_it_exits_1_for_an_unknown_campaign_on_the_command_line(db, capsys):
    from django.core.management import ManagementUtility

    with pytest.raises(SystemExit) as exit_info:
        ManagementUtility(["manage.py", "blindness_report", "--campaign", "Nope"]).execute()
    assert exit_info.value.code == 1
    assert "No campaign named 'Nope'" in capsys.readouterr().err


# --- the page -------------------------------------------------------------------


def _url(campaign) -> str:
    return reverse("campaign-blindness", args=[campaign.pk])


def test_it_shows_the_audit_to_researchers(client, rachel, campaign):
    client.force_login(rachel)
    response = client.get(_url(campaign))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Guessability:" in html and "95% CI" in html and "n = 12 articles on 4 topics" in html
    assert "atlas_agent" in html and "quill_researcher" in html and "wikipedia (reference)" in html
    assert "Numbered headings" in html and "Which features separate most" in html
    assert "Tells the reference never shows" in html


def test_it_is_linked_from_the_campaign_page(client, rachel, campaign):
    client.force_login(rachel)
    response = client.get(reverse("campaign-detail", args=[campaign.pk]))
    assert response.status_code == 200
    assert _url(campaign) in response.content.decode()


def test_it_keeps_its_queries_bounded(client, rachel, catalogue, campaign, django_assert_num_queries):
    # Session, user, campaign, articles, and the adjudication items (the adjudicator's view): the same five for 8 pairs as for 2.
    small = campaign_create(name="Small", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=2)
    client.force_login(rachel)
    with django_assert_num_queries(5):
        assert client.get(_url(campaign)).status_code == 200
    with django_assert_num_queries(5):
        assert client.get(_url(small)).status_code == 200


def test_it_shows_the_effects_and_both_ways_of_showing_emphasis_on_the_page(client, rachel, campaign):
    client.force_login(rachel)
    html = client.get(_url(campaign)).content.decode()
    assert "Per-system effect of each feature" in html
    assert "With emphasis as written (what this campaign shows): 100%" in html
    assert "With neutral emphasis (bold and italic as plain text): " in html
    for label in (
        "Longest paragraph",
        "Median paragraph",
        "Italic per 1,000 words",
        "Lists per 1,000 words",
        "Tables per 1,000 words",
        "Heading depth",
    ):
        assert label in html


def test_it_warns_on_the_campaign_page_before_launch_only(client, rachel, alice, campaign):
    from annotate.services.claims import assignment_claim_next

    client.force_login(rachel)
    page = client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    # The demo's reference alone bolds its subject: 100% as written, a lower bound far above 60%.
    assert "Annotators could tell the reference by its looks: guessability 100% (95% CI 100%–100%)" in page
    assert "Leading features: Bold per 1,000 words (higher in the reference, AUC 1.00), Words (higher in the reference, AUC 1.00)" in page
    assert 'class="warning blindness-warning"' in page
    assignment_claim_next(campaign=campaign, user=alice)
    assert "blindness-warning" not in client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()


def test_it_does_not_warn_when_the_looks_give_little_away(client, rachel, catalogue):
    # One topic: no figure, so nothing to warn about.
    tiny = campaign_create(name="One topic", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1)
    client.force_login(rachel)
    assert "blindness-warning" not in client.get(reverse("campaign-detail", args=[tiny.pk])).content.decode()


def test_it_names_the_presentation_features_on_the_sample(sample_path):
    from tests.helpers import run

    assert run("import_wlc", str(sample_path), "--quiet-progress").code == 0
    systems = "wikipedia,deep_researcher,doubao,gemini_3_pro,langchain_w_gpt5,qwen,tongyi"
    assert run("create_campaign", "--name", "Sample", "--criteria", "wiki_writing_criteria", "--systems", systems).code == 0
    out = _run("--campaign", "Sample")
    assert "n = 140 articles on 20 topics" in out
    for label in (
        "Median paragraph (mean)",
        "Longest paragraph (mean)",
        "Bold per 1,000 words (mean)",
        "Italic per 1,000 words (mean)",
        "Lists per 1,000 words (mean)",
        "Tables per 1,000 words (mean)",
        "Heading depth (mean)",
    ):
        assert f"| {label} |" in out
    assert "With neutral emphasis (bold and italic as plain text): " in out
    data = json.loads(_run("--campaign", "Sample", "--format", "json"))
    reference = next(row for row in data["systems"] if row["key"] == "wikipedia")
    # Paragraphs as written: the reference's longest paragraph is about 200 words, not about 480.
    assert 150 <= reference["means"]["paragraph_longest"] <= 260
    for row in data["systems"]:
        if not row["is_reference"]:
            assert set(row["effects"]) == set(data["systems"][0]["means"])
