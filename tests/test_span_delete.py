"""POST /work/<id>/spans/<span>/delete/: an annotator takes back a marked passage, with or without htmx."""

import pytest
from django.urls import reverse

from annotate.models import Span
from annotate.rendering import plain_text
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import span_add

pytestmark = pytest.mark.django_db


def marked(campaign, user, comment: str) -> Span:
    """The user's next pair with its left article's first 12 characters marked."""
    work = assignment_claim_next(campaign=campaign, user=user)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    span_add(assignment=work, position="1", start=0, end=12, quote=plain_text(left.html)[:12], polarity=1, comment=comment)
    return work.spans.get()


def delete_url(span: Span) -> str:
    return reverse("span-delete", args=[span.assignment_id, span.pk])


def test_it_deletes_by_htmx_and_answers_the_spans_fragment(client, campaign, alice):
    span = marked(campaign, alice, "alices mark")
    client.force_login(alice)

    response = client.post(delete_url(span), HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="spans"') and "<html" not in html
    assert "alices mark" not in html
    assert not Span.objects.exists()


def test_it_deletes_without_javascript_and_goes_back_to_the_spans(client, campaign, alice):
    span = marked(campaign, alice, "alices mark")
    client.force_login(alice)

    response = client.post(delete_url(span))

    assert response.status_code == 302
    assert response["Location"] == reverse("assignment", args=[span.assignment_id]) + "#spans"
    assert not Span.objects.exists()


def test_it_refuses_someone_elses_span(client, campaign, alice, bob, rachel, oscar):
    span = marked(campaign, alice, "alices mark")
    bobs = marked(campaign, bob, "bobs mark")
    for user in (bob, rachel, oscar):
        client.force_login(user)
        assert client.post(delete_url(span), HTTP_HX_REQUEST="true").status_code == 403
        assert client.post(delete_url(span)).status_code == 403
    # Through her own assignment's URL alice cannot reach bob's span either.
    client.force_login(alice)
    response = client.post(reverse("span-delete", args=[span.assignment_id, bobs.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "No such passage." in response.content.decode()
    assert Span.objects.count() == 2
