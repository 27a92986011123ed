"""POST /work/<id>/criteria/<key>/ with `flush=1`: the save the page sends as it is hidden or left.

`navigator.sendBeacon` (or `fetch` with `keepalive`) can set no header, so the CSRF token travels in
the body, and nobody reads the reply: 204, or a 4xx with the reason as plain text. The CSRF checks
are Django's own, as for every other form: no token, a wrong token or another site's origin is refused.
"""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Label, LabelChange
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(campaign, alice):
    return assignment_claim_next(campaign=campaign, user=alice)


@pytest.fixture
def browser_client(alice, work):
    """A client that checks CSRF as a browser's requests are checked, holding the page's token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.get(reverse("assignment", args=[work.pk])).status_code == 200
    return client


def url(work, key="ww_cc_1"):
    return reverse("label-save", args=[work.pk, key])


def beacon(client, work, data, **headers):
    """As sendBeacon posts a FormData: multipart, the page's origin, no htmx or CSRF header."""
    body = {"csrfmiddlewaretoken": client.cookies["csrftoken"].value, "flush": "1", **data}
    return client.post(url(work), body, headers={"Origin": "http://testserver", **headers})


def test_it_saves_a_flush_and_answers_204(browser_client, work):
    response = beacon(browser_client, work, {"position": "2", "rationale": "Typed just before leaving."})
    assert response.status_code == 204
    assert response.content == b""
    label = Label.objects.get(assignment=work, criterion__key="ww_cc_1")
    assert (label.winner, label.rationale) == ("b" if work.a_first else "a", "Typed just before leaving.")
    assert LabelChange.objects.filter(assignment=work).count() == 2


def test_it_treats_a_flush_of_what_is_stored_as_saved(browser_client, work):
    for _ in range(2):
        assert beacon(browser_client, work, {"position": "1", "rationale": "Same text twice."}).status_code == 204
    assert LabelChange.objects.filter(assignment=work).count() == 2  # the second changed nothing


def test_it_refuses_bad_input_with_a_plain_text_reason(browser_client, work):
    response = beacon(browser_client, work, {"position": "tie", "rationale": "A tie."})
    assert response.status_code == 422
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == "This campaign does not allow ties: choose Article 1 or Article 2."
    response = beacon(browser_client, work, {"position": "1", "rationale": "x" * 5001})
    assert response.status_code == 422 and "at most 5000 characters" in response.content.decode()
    response = beacon(browser_client, work, {"position": "1", "rationale": "a\x00b"})
    assert response.status_code == 400  # unstorable, refused before the view
    assert not Label.objects.exists()


def test_it_refuses_a_flush_without_the_token_or_from_another_site(browser_client, work):
    token = browser_client.cookies["csrftoken"].value
    data = {"flush": "1", "position": "1", "rationale": "From elsewhere."}
    assert browser_client.post(url(work), data).status_code == 403
    assert browser_client.post(url(work), {**data, "csrfmiddlewaretoken": "x" * 64}).status_code == 403
    cross_site = browser_client.post(url(work), {**data, "csrfmiddlewaretoken": token}, headers={"Origin": "https://evil.example"})
    assert cross_site.status_code == 403
    assert not Label.objects.exists()


def test_it_refuses_a_flush_to_somebody_elses_work(work, bob, oscar):
    for user in (bob, oscar):
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        client.get(reverse("home"))
        response = beacon(client, work, {"position": "1", "rationale": "Not mine."})
        assert response.status_code == 403
    assert not Label.objects.exists()
