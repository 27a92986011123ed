"""Two campaigns created with one name at once, with real threads, on SQLite or PostgreSQL: one is
created, the other is told the name is taken (a 4xx with the message), never a 500."""

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotate.models import Campaign, System
from annotate.services.campaigns import campaign_create, campaign_create_from_pairs
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 4


def test_it_creates_one_campaign_and_refuses_the_other_when_two_take_one_name(catalogue):
    for round_ in range(ROUNDS):
        name = f"Twin {round_}"
        calls = [
            lambda: campaign_create(name=name, criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], overlap=1) for _ in range(2)
        ]
        results, errors = fire(calls)
        assert Campaign.objects.filter(name=name).count() == 1
        assert len([r for r in results if r is not None]) == 1
        assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
        assert "already exists" in errors[0].messages[0]


def test_it_refuses_a_taken_name_when_two_send_pairs_to_humans_at_once(campaign):
    pair_ids = list(campaign.pairs.values_list("pk", flat=True))
    for round_ in range(ROUNDS):
        name = f"Abstained {round_}"
        results, errors = fire([lambda: campaign_create_from_pairs(name=name, source=campaign, pair_ids=pair_ids) for _ in range(2)])
        assert Campaign.objects.filter(name=name).count() == 1
        assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
        assert "already exists" in errors[0].messages[0]
        # Nothing half-written: the refused campaign left no pairs behind.
        assert Campaign.objects.get(name=name).pairs.count() == len(pair_ids)


def test_it_answers_422_with_the_message_when_two_forms_take_one_name(catalogue, rachel, alice):
    systems = [s.pk for s in System.objects.filter(key__in=["wikipedia", "atlas_agent"])]
    for round_ in range(ROUNDS):
        name = f"Form twin {round_}"
        form = {"name": name, "criterion_set": catalogue.pk, "systems": systems, "overlap": 1, "pair_mode": "reference",
                "rationale_min_length": 10, "annotators": [alice.pk], "claim_timeout_minutes": 120}  # fmt: skip
        clients = [Client() for _ in range(2)]
        for client in clients:
            client.force_login(rachel)
        results, errors = fire([lambda client=client: client.post(reverse("campaign-new"), form) for client in clients])
        assert not errors, errors
        assert sorted(r.status_code for r in results) == [302, 422]
        refused = next(r for r in results if r.status_code == 422)
        assert "already exists" in refused.content.decode()
        assert Campaign.objects.filter(name=name).count() == 1
