"""Saves of one assignment arriving at once (two tabs, a retry racing the original), with real threads and HTTP clients."""

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Label, LabelChange
from annotate.services.claims import assignment_claim_next
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_accepts_eight_simultaneous_first_saves_of_one_criterion(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    rationales = [f"reason number {i}" for i in range(8)]

    def save(i):
        client = Client()
        client.force_login(alice)
        if i % 2:
            # The API, as a script would send it.
            url = reverse("api:label-save", args=[work.pk, "ww_cc_1"])
            return client.put(url, {"position": "1", "rationale": rationales[i]}, content_type="application/json").status_code
        url = reverse("label-save", args=[work.pk, "ww_cc_1"])
        return client.post(url, {"position": "2", "rationale": rationales[i]}, HTTP_HX_REQUEST="true").status_code

    statuses, errors = fire([lambda i=i: save(i) for i in range(8)])
    assert not errors
    assert statuses == [200] * 8
    label = Label.objects.get(assignment=work, criterion__key="ww_cc_1")
    # The last write wins, whole: its winner and its rationale belong together.
    last = LabelChange.objects.filter(assignment=work, field="rationale").order_by("id").last()
    assert label.rationale == last.new_value
    sent_position = "1" if rationales.index(label.rationale) % 2 else "2"
    assert label.winner == ("a" if (sent_position == "1") == work.a_first else "b")
    # Every save changed the rationale, so each one is in the audit trail.
    assert LabelChange.objects.filter(assignment=work, field="rationale").count() == 8
    assert sorted(LabelChange.objects.filter(assignment=work, field="rationale").values_list("new_value", flat=True)) == sorted(rationales)
