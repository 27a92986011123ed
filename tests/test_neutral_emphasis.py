"""A campaign's neutral emphasis, end to end: how it is set, the page, the exports and the audit."""

import csv
import json
import re

import pytest
from django.urls import reverse

from annotate.models import Campaign, System
from annotate.rendering import plain_text
from annotate.services.answers import label_save, overall_save
from annotate.services.campaigns import campaign_create, campaign_set_neutral_emphasis
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import span_add
from tests.helpers import run

pytestmark = pytest.mark.django_db

EMPHASIS_TAG = re.compile(r"<(?:strong|b|em|i)>")


def _marsh(catalogue, alice, *, neutral: bool, name: str = "Emphasis") -> Campaign:
    # The first demo topic by title, Eliza Thornbury: the reference has bold and italics, atlas_agent italics.
    return campaign_create(
        name=name, criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1,
        annotators=[alice], allow_tie=True, ask_overall=True, neutral_emphasis=neutral,
    )  # fmt: skip


def _columns(html: str) -> list[str]:
    return re.findall(r'<article class="prose"[^>]*data-position="[12]">(.*?)</article>', html, re.S)


# --- the page -------------------------------------------------------------------


@pytest.mark.parametrize("neutral", [False, True])
def test_it_shows_bold_and_italics_on_both_sides_only_as_written(client, catalogue, alice, neutral):
    campaign = _marsh(catalogue, alice, neutral=neutral)
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    response = client.get(reverse("assignment", args=[work.pk]))
    assert response.status_code == 200
    columns = _columns(response.content.decode())
    assert len(columns) == 2
    for column in columns:
        assert bool(EMPHASIS_TAG.search(column)) is not neutral
    # The text is the same either way, so offsets into it (marked passages) mean the same.
    shown = [work.pair.article_a, work.pair.article_b] if work.a_first else [work.pair.article_b, work.pair.article_a]
    for column, article in zip(columns, shown):
        assert plain_text(column) == plain_text(article.html)
    # The API gives the annotator the same HTML as the page.
    api = client.get(reverse("api:assignment-detail", args=[work.pk])).json()
    assert [bool(EMPHASIS_TAG.search(a["html"])) for a in api["articles"]] == [not neutral, not neutral]


def test_it_keeps_marked_passages_working_under_neutral_emphasis(client, catalogue, alice):
    campaign = _marsh(catalogue, alice, neutral=True)
    work = assignment_claim_next(campaign=campaign, user=alice)
    first = work.pair.article_a if work.a_first else work.pair.article_b
    text = plain_text(first.html)
    span = span_add(assignment=work, position="1", start=2, end=30, quote=text[2:30], polarity=1)
    assert span.quote == text[2:30]


# --- setting it -----------------------------------------------------------------


def test_it_is_off_by_default_and_set_by_the_web_form(client, rachel, catalogue):
    client.force_login(rachel)
    systems = list(System.objects.filter(key__in=["wikipedia", "atlas_agent"]).values_list("pk", flat=True))
    form = {
        "criterion_set": catalogue.pk, "systems": systems, "overlap": "1", "pair_mode": "reference",
        "rationale_min_length": "10", "claim_timeout_minutes": "60",
    }  # fmt: skip
    assert client.post(reverse("campaign-new"), {**form, "name": "Plain"}).status_code == 302
    assert client.post(reverse("campaign-new"), {**form, "name": "Neutral", "neutral_emphasis": "on"}).status_code == 302
    assert not Campaign.objects.get(name="Plain").neutral_emphasis
    assert Campaign.objects.get(name="Neutral").neutral_emphasis
    assert "Neutral emphasis: show bold and italic as plain text" in client.get(reverse("campaign-new")).content.decode()


def test_it_is_set_by_create_campaign(catalogue):
    result = run(
        "create_campaign", "--name", "Cli", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--neutral-emphasis"
    )
    assert result.code == 0, result.err
    assert "neutral emphasis" in result.out and Campaign.objects.get(name="Cli").neutral_emphasis
    assert run("create_campaign", "--name", "Cli2", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent").code == 0
    assert not Campaign.objects.get(name="Cli2").neutral_emphasis


def test_it_is_refused_for_a_labels_only_campaign(catalogue):
    result = run("create_campaign", "--name", "Votes", "--criteria", "wiki_writing", "--labels-only", "--neutral-emphasis")
    assert result.code == 1 and "neutral emphasis does not apply to it" in result.err
    assert not Campaign.objects.filter(name="Votes").exists()


def test_it_is_shown_on_the_campaign_page_and_can_change_until_the_first_claim(client, rachel, alice, catalogue):
    campaign = _marsh(catalogue, alice, neutral=False)
    client.force_login(rachel)
    page = client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    assert "emphasis as written" in page and reverse("campaign-emphasis", args=[campaign.pk]) in page
    response = client.post(reverse("campaign-emphasis", args=[campaign.pk]), {"neutral_emphasis": "1"})
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.neutral_emphasis
    page = client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    assert "neutral emphasis (bold and italic shown as plain text)" in page
    assignment_claim_next(campaign=campaign, user=alice)
    # Once a pair is claimed, what annotators see is settled.
    refused = client.post(reverse("campaign-emphasis", args=[campaign.pk]), {"neutral_emphasis": "0"})
    assert refused.status_code == 409 and "Annotators have started" in refused.content.decode()
    campaign.refresh_from_db()
    assert campaign.neutral_emphasis
    assert (
        reverse("campaign-emphasis", args=[campaign.pk]) not in client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    )


def test_it_guards_the_emphasis_switch(client, rachel, alice, oscar, catalogue):
    campaign = _marsh(catalogue, alice, neutral=False)
    url = reverse("campaign-emphasis", args=[campaign.pk])
    assert client.post(url, {"neutral_emphasis": "1"}).status_code == 302  # anonymous: to the login page
    client.force_login(alice)
    assert client.post(url, {"neutral_emphasis": "1"}).status_code == 403
    client.force_login(rachel)
    bad = client.post(url, {"neutral_emphasis": "yes"})
    assert bad.status_code == 400 and "neutral_emphasis=1" in bad.content.decode()
    campaign.refresh_from_db()
    assert not campaign.neutral_emphasis


def test_it_refuses_to_change_after_a_claim_in_the_service(catalogue, alice):
    from django.core.exceptions import ValidationError

    campaign = _marsh(catalogue, alice, neutral=True)
    assignment_claim_next(campaign=campaign, user=alice)
    with pytest.raises(ValidationError):
        campaign_set_neutral_emphasis(campaign=campaign, neutral_emphasis=False)
    assert Campaign.objects.get(pk=campaign.pk).neutral_emphasis


# --- exports --------------------------------------------------------------------


@pytest.mark.parametrize("neutral", [False, True])
def test_it_records_the_option_in_the_labels_overall_and_spans_files(tmp_path, catalogue, alice, neutral):
    campaign = _marsh(catalogue, alice, neutral=neutral, name=f"Export {neutral}")
    work = assignment_claim_next(campaign=campaign, user=alice)
    criterion = campaign.criterion_set.criteria.order_by("order").first()
    label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="Plainer lead.")
    overall_save(assignment=work, user=alice, value="tie")
    first = work.pair.article_a if work.a_first else work.pair.article_b
    span_add(assignment=work, position="1", start=0, end=5, quote=plain_text(first.html)[:5], polarity=1)
    for suffix in ("csv", "jsonl"):
        out = tmp_path / f"labels.{suffix}"
        assert run("export_labels", "--campaign", campaign.name, "--out", str(out)).code == 0
        for path in (out, tmp_path / f"labels.overall.{suffix}", tmp_path / f"labels.spans.{suffix}"):
            text = path.read_text(encoding="utf-8")
            rows = list(csv.DictReader(text.splitlines())) if suffix == "csv" else [json.loads(line) for line in text.splitlines()]
            assert len(rows) == 1, path
            expected = ("true" if neutral else "false") if suffix == "csv" else neutral
            assert rows[0]["neutral_emphasis"] == expected, path


def test_it_records_the_option_in_the_articles_export_of_a_campaign(tmp_path, catalogue, alice):
    campaign = _marsh(catalogue, alice, neutral=True)
    out = tmp_path / "articles.jsonl"
    result = run("export_articles", "--campaign", campaign.name, "--out", str(out))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and {row["system"] for row in rows} == {"wikipedia", "atlas_agent"}
    assert all(row["campaign"] == campaign.name and row["neutral_emphasis"] is True for row in rows)
    assert run("export_articles", "--campaign", "Nope", "--out", str(out)).code == 1


def test_it_records_the_option_in_the_calibration_report(catalogue, alice):
    from calibration.report.build import build_report

    for neutral in (False, True):
        campaign = _marsh(catalogue, alice, neutral=neutral, name=f"Report {neutral}")
        assert build_report(campaign, rounds=20)["parameters"]["neutral_emphasis"] is neutral


# --- the audit ------------------------------------------------------------------


def test_it_audits_the_demo_with_and_without_neutral_emphasis(demo_campaign, alice):
    campaign_set_neutral_emphasis(campaign=demo_campaign, neutral_emphasis=False)  # the demo turns it on
    as_written = json.loads(run("blindness_report", "--campaign", "Demo campaign", "--format", "json").out)
    assert as_written["neutral_emphasis"] is False
    # On the demo only the reference bolds its subject: as written, the looks give it away.
    assert as_written["guessability"]["accuracy"] == 1.0
    assert as_written["guessability_by_emphasis"]["as_written"]["accuracy"] == 1.0
    neutral_figure = as_written["guessability_by_emphasis"]["neutral"]
    assert neutral_figure["accuracy"] < 1.0
    systems = {row["key"]: row for row in as_written["systems"]}
    assert systems["wikipedia"]["means"]["bold_per_1k"] > 0 == systems["atlas_agent"]["means"]["bold_per_1k"]
    campaign_set_neutral_emphasis(campaign=demo_campaign, neutral_emphasis=True)
    neutral = json.loads(run("blindness_report", "--campaign", "Demo campaign", "--format", "json").out)
    assert neutral["neutral_emphasis"] is True
    assert neutral["guessability"] == neutral["guessability_by_emphasis"]["neutral"] == neutral_figure
    assert neutral["guessability_by_emphasis"]["as_written"] == as_written["guessability"]
    assert all(row["means"]["bold_per_1k"] == row["means"]["italic_per_1k"] == 0 for row in neutral["systems"])
