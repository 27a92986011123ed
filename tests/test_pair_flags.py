"""A way out of a broken pair (issue 37): annotators flag it, staff void it for everyone."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from annotate.models import Assignment, Criterion, Label, LabelChange, PairFlag
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.flags import pair_flag, pair_void
from annotate.services.labelling import assignment_submit

pytestmark = pytest.mark.django_db


def finish(assignment, user):
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set):
        label_save(assignment=assignment, criterion=criterion, user=user, position="1", rationale="fine prose")
    assignment_submit(assignment=assignment, user=user)


def test_it_records_one_flag_per_assignment_and_refuses_bad_input(campaign, alice, bob):
    work = assignment_claim_next(campaign=campaign, user=alice)
    pair_flag(assignment=work, user=alice, reason="broken", note="Article 2 stops mid-sentence.")
    pair_flag(assignment=work, user=alice, reason="wrong_topic")
    flag = PairFlag.objects.get()
    assert (flag.reason, flag.note, flag.pair_id) == ("wrong_topic", "", work.pair_id)
    with pytest.raises(ValidationError, match="Choose why"):
        pair_flag(assignment=work, user=alice, reason="boring")
    with pytest.raises(ValidationError, match="Say in the note"):
        pair_flag(assignment=work, user=alice, reason="other")
    with pytest.raises(ValidationError, match="at most 2000"):
        pair_flag(assignment=work, user=alice, reason="other", note="x" * 2001)
    with pytest.raises(PermissionDenied):
        pair_flag(assignment=work, user=bob, reason="broken")
    assert PairFlag.objects.get().reason == "wrong_topic"


def test_it_voids_a_pair_for_everyone_frees_the_slot_and_keeps_the_audit(campaign, alice, bob, rachel):
    rachel.is_staff = True
    rachel.save()
    mine = assignment_claim_next(campaign=campaign, user=alice)
    theirs = assignment_claim_next(campaign=campaign, user=bob)
    assert mine.pair_id == theirs.pair_id  # overlap 2: both hold the first pair
    finish(theirs, bob)
    pair_flag(assignment=mine, user=alice, reason="broken", note="Empty article.")
    labels_before = Label.objects.filter(assignment__pair=mine.pair).count()

    with pytest.raises(PermissionDenied):
        pair_void(pair=mine.pair, by=alice)
    assert pair_void(pair=mine.pair, by=rachel, reason="Article 2 is empty") == 2
    assert pair_void(pair=mine.pair, by=rachel) == 0  # once
    assert set(Assignment.objects.filter(pair=mine.pair).values_list("status", flat=True)) == {"voided"}
    audit = LabelChange.objects.filter(assignment__pair=mine.pair, field="status", new_value="voided")
    assert sorted(audit.values_list("old_value", flat=True)) == ["active", "submitted"]
    assert Label.objects.filter(assignment__pair=mine.pair).count() == labels_before  # nothing deleted
    # Out of every statistic: they read submitted work only.
    assert not Label.objects.filter(assignment__pair=mine.pair, assignment__status=Assignment.Status.SUBMITTED).exists()

    # Alice's slot is free: her next claim is another pair, and the voided one is never handed out again.
    following = assignment_claim_next(campaign=campaign, user=alice)
    assert following is not None and following.pair_id != mine.pair_id
    with pytest.raises(PermissionDenied, match="voided"):
        label_save(
            assignment=Assignment.objects.get(pk=mine.pk), criterion=Criterion.objects.first(), user=alice, position="1", rationale="x" * 12
        )


def test_it_shows_flags_to_staff_and_voids_from_the_campaign_page(client, campaign, alice, rachel):
    rachel.is_staff = True
    rachel.save()
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    response = client.post(
        reverse("pair-flag", args=[work.pk]), {"reason": "offensive", "note": "Slurs in §2."}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and "You flagged this pair: Offensive content" in response.content.decode()
    refused = client.post(reverse("pair-flag", args=[work.pk]), {"reason": ""}, headers={"HX-Request": "true"})
    assert refused.status_code == 422 and "Choose why" in refused.content.decode()
    assert client.post(reverse("pair-void", args=[campaign.pk, work.pair_id])).status_code in (302, 403)
    assert work.pair.__class__.objects.get(pk=work.pair_id).voided_at is None  # annotators cannot void

    client.force_login(rachel)
    page = client.get(reverse("campaign-detail", args=[campaign.pk])).content.decode()
    assert "Slurs in §2." in page and "Void this pair for everyone" in page
    response = client.post(reverse("pair-void", args=[campaign.pk, work.pair_id]), {"reason": "offensive"}, follow=True)
    assert "1 assignment voided" in response.content.decode()
    client.force_login(alice)
    assert client.get(reverse("assignment", args=[work.pk])).status_code == 403
