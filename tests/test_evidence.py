"""Evidence tied to a criterion (issue 37): a passage marked for a criterion, the campaign's rule that
asks for it, the page's list beside the rationale, and its round trip through the spans file."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.models import Campaign, Criterion, Span
from annotate.rendering import plain_text
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_missing, assignment_submit, span_add, span_delete
from interchange import SPAN_COLUMNS, span_rows
from tests.test_import_labels import import_labels, label_row, span_row, write_csv

pytestmark = pytest.mark.django_db


def evidence_for(work, key: str, polarity: int = 1) -> Span:
    left = work.pair.article_a if work.a_first else work.pair.article_b
    return span_add(assignment=work, position="1", start=0, end=12, quote=plain_text(left.html)[:12], polarity=polarity, criterion=key)


def answered(campaign, user):
    work = assignment_claim_next(campaign=campaign, user=user)
    for criterion in Criterion.objects.filter(criterion_set=campaign.criterion_set):
        label_save(assignment=work, criterion=criterion, user=user, position="1", rationale="fine prose")
    return work


def test_it_blocks_submission_until_every_criterion_has_its_evidence(campaign, alice):
    Campaign.objects.filter(pk=campaign.pk).update(evidence_required=Campaign.Evidence.EVERY)
    work = answered(campaign, alice)
    keys = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).values_list("key", flat=True))
    assert assignment_missing(assignment=work) == [f"{key}: mark a passage as evidence" for key in keys]
    for key in keys:
        evidence_for(work, key)
    assert assignment_missing(assignment=work) == []
    assignment_submit(assignment=work, user=alice)


def test_it_keeps_a_submitted_pair_complete_when_its_last_evidence_would_go(campaign, alice):
    Campaign.objects.filter(pk=campaign.pk).update(evidence_required=Campaign.Evidence.WINNERS)
    work = answered(campaign, alice)
    spans = [
        evidence_for(work, key) for key in Criterion.objects.filter(criterion_set=campaign.criterion_set).values_list("key", flat=True)
    ]
    assignment_submit(assignment=work, user=alice)
    with pytest.raises(ValidationError, match="mark another passage for this criterion first"):
        span_delete(assignment=work, span_id=spans[0].pk)
    second = evidence_for(work, spans[0].criterion.key, polarity=-1)
    span_delete(assignment=work, span_id=spans[0].pk)  # another one stays
    assert Span.objects.filter(assignment=work, criterion=spans[0].criterion).get() == second


def test_it_refuses_evidence_for_a_criterion_not_asked_on_the_pair(client, campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    client.force_login(alice)
    values = {"position": "1", "start": 0, "end": 12, "quote": plain_text(left.html)[:12], "polarity": 1, "criterion": "no_such"}
    response = client.post(reverse("span-add", args=[work.pk]), values, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "No criterion &#x27;no_such&#x27; is asked on this pair" in response.content.decode()
    assert not Span.objects.exists()


def test_it_lists_evidence_beside_its_rationale_and_refreshes_the_lists_out_of_band(client, campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    key = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first().key
    client.force_login(alice)
    values = {"position": "1", "start": 0, "end": 12, "quote": plain_text(left.html)[:12], "polarity": -1, "criterion": key}
    response = client.post(reverse("span-add", args=[work.pk]), values, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<ul class="evidence" id="ev-{key}" data-criterion="{key}" hx-swap-oob="true"' in html
    span = Span.objects.get()
    assert span.criterion.key == key
    assert f'data-span="{span.pk}"' in html.split(f'id="ev-{key}"')[1].split("</ul>")[0]
    page = client.get(reverse("assignment", args=[work.pk])).content.decode()
    in_form = page.split(f'id="c-{key}"')[1].split("</form>")[0]
    assert f'data-span="{span.pk}"' in in_form
    assert f'data-span="{span.pk}"' not in page.split('id="spans"')[1].split("</section>")[0]  # not a free mark


def test_it_exports_evidence_with_its_criterion(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    key = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first().key
    evidence_for(work, key)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    span_add(assignment=work, position="1", start=0, end=5, quote=plain_text(left.html)[:5], polarity=1)
    rows = span_rows(campaign)
    assert [(row["criterion"], row["system"], row["start"], row["end"]) for row in rows] == [
        (key, left.system.key, 0, 12),
        ("", left.system.key, 0, 5),
    ]


def test_it_imports_evidence_and_files_without_the_criterion_column(demo_campaign, tmp_path):
    path = write_csv(tmp_path / "labels.csv", [label_row(rater="r1"), label_row(rater="r2")])
    write_csv(tmp_path / "labels.spans.csv", [span_row(rater="r1", criterion="ww_cc_1"), span_row(rater="r2", criterion="")], SPAN_COLUMNS)
    result = import_labels(path)
    assert result.code == 0, result.err
    found = dict(Span.objects.values_list("assignment__annotator__username", "criterion__key"))
    assert found == {"r1": "ww_cc_1", "r2": None}
    assert "spans: 0 new, 2 unchanged" in import_labels(path).out  # the same again: nothing changes

    Span.objects.all().delete()
    old_columns = tuple(c for c in SPAN_COLUMNS if c != "criterion")
    write_csv(tmp_path / "labels.spans.csv", [{k: v for k, v in span_row(rater="r1").items() if k in old_columns}], old_columns)
    result = import_labels(path)
    assert result.code == 0, result.err
    assert list(Span.objects.values_list("criterion", flat=True)) == [None]


def test_it_reports_evidence_for_an_unknown_criterion(demo_campaign, tmp_path):
    path = write_csv(tmp_path / "labels.csv", [label_row()])
    spans = write_csv(tmp_path / "labels.spans.csv", [span_row(criterion="ww_nope")], SPAN_COLUMNS)
    result = import_labels(path)
    assert result.code == 1
    assert f"{spans}:2: criterion 'ww_nope' is not a criterion of" in result.err
    assert not Span.objects.exists()
