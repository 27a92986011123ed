"""Two adjudicators record a final answer on one item at once, with real threads, on SQLite or PostgreSQL."""

import pytest

from annotate.models import Adjudication, Criterion, LabelChange
from annotate.services.adjudication import campaign_adjudicators_add
from annotate.services.answers import AlreadyAdjudicated, adjudication_save
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_records_exactly_one_final_answer_when_two_adjudicators_race(campaign, rachel, django_user_model):
    judges = [django_user_model.objects.create_user(f"adj{i}") for i in range(2)]
    campaign_adjudicators_add(campaign=campaign, users=judges)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    item = Adjudication.objects.create(
        campaign=campaign,
        pair=campaign.pairs.first(),
        criterion=criterion,
        kind="split",
        a_first=True,
        order="ab",
        opened_by=rachel,
        opened_at=campaign.created_at,
    )
    calls = [
        (
            lambda user=user, position=position: adjudication_save(
                adjudication=Adjudication.objects.select_related("campaign", "criterion").get(pk=item.pk),
                user=user,
                position=position,
                reason=f"{user.username} decides",
            )
        )
        for user, position in zip(judges, ("1", "2"))
    ]
    for _ in range(3):
        Adjudication.objects.filter(pk=item.pk).update(winner="", reason="", decided_by=None, decided_at=None)
        LabelChange.objects.filter(adjudication=item).delete()
        results, errors = fire(calls)
        assert len([r for r in results if r is not None]) == 1
        assert len(errors) == 1 and isinstance(errors[0], AlreadyAdjudicated), errors
        stored = Adjudication.objects.get(pk=item.pk)
        winner_by = next(r for r in results if r is not None).decided_by
        assert stored.decided_by == winner_by and stored.reason == f"{winner_by.username} decides"
        assert LabelChange.objects.filter(adjudication=item, source="adjudicated").count() == 2


def test_it_keeps_one_account_off_both_lists_when_added_to_both_at_once(campaign, django_user_model):
    from django.core.exceptions import ValidationError

    from annotate.services.campaigns import campaign_annotators_add

    accounts = [django_user_model.objects.create_user(f"both{i}") for i in range(6)]
    for user in accounts:
        results, errors = fire(
            [
                lambda user=user: campaign_adjudicators_add(campaign=campaign, users=[user]),
                lambda user=user: campaign_annotators_add(campaign=campaign, users=[user]),
            ]
        )
        assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
        assert "cannot" in errors[0].messages[0]
        on_both = campaign.adjudicators.filter(pk=user.pk).exists() and campaign.annotators.filter(pk=user.pk).exists()
        assert not on_both, f"{user.username} is both an annotator and an adjudicator"
