import pytest
from django.urls import reverse

from annotate.models import Criterion
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db

MODELS = ["topic", "system", "article", "criterionset", "category", "criterion", "campaign", "pair", "assignment", "labelchange", "span"]


def test_it_lists_every_model_for_a_superuser(client, django_user_model, campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    label_save(assignment=work, criterion=Criterion.objects.first(), user=alice, position="1", rationale="why not")
    admin_user = django_user_model.objects.create_superuser("root", password="root-password")
    client.force_login(admin_user)
    for model in MODELS:
        listing = client.get(reverse(f"admin:annotate_{model}_changelist"))
        assert listing.status_code == 200, model
    assert client.get(reverse("admin:annotate_assignment_change", args=[work.pk])).status_code == 200


def test_it_keeps_annotators_out_of_the_admin(client, alice):
    client.force_login(alice)
    assert client.get(reverse("admin:annotate_article_changelist")).status_code == 302
