from django.conf import settings
from django.db import models

from annotate.models import Campaign


class StudyPlan(models.Model):
    """A campaign's analysis, frozen before its first label (pre-registration).

    `record` is the plan as canonical JSON would write it (`calibration.plan.check`), and
    `sha256` the SHA-256 of that JSON. A frozen plan is never changed: later reports compare
    the campaign with it and list every deviation.
    """

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="study_plan")
    frozen_at = models.DateTimeField()
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        help_text="Empty: frozen with `freeze_plan` and no --by.",
    )
    record = models.JSONField()
    sha256 = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"study plan of {self.campaign_id} ({self.sha256[:12]})"
