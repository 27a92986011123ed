"""A campaign's settings changed after its creation: the one write for them, checked and audited.

The settings page (`annotate.settings_views`), the campaign page's emphasis and ε forms all come
here. A change is refused, whole, when a value is out of range, when it would change what annotators
see after they have started (neutral emphasis and headings), or when a guard of hook
``settings_guards`` says no (settings.HOOKS: calibration's frozen study plan, which annotate may not
import; common/hooks.py). Every field changed gets one `CampaignSettingChange` row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotate.models import Assignment, Campaign, CampaignSettingChange
from annotate.services.alt_epsilon import epsilon_problem
from common.hooks import hooks

# The settings that may change after creation, with the words the page and the audit use for them.
LABELS = {
    "display_name": "name shown to annotators",
    "gold_rate": "gold rate",
    "repeat_rate": "swapped-repeat rate",
    "neutral_emphasis": "neutral emphasis",
    "neutral_headings": "neutral headings",
    "guess_question": "guess question",
    "reference_name": "the reference's name",
    "alt_epsilon": "alt-test ε",
    "alt_epsilon_reason": "the reason for ε",
}
# What annotators see: fixed once the first item is claimed.
PRESENTATION = ("neutral_emphasis", "neutral_headings")
STARTED = "Annotators have started: what they saw cannot change now. Create a new campaign to show the articles another way."
REFERENCE_NAME_MAX = 60
DISPLAY_NAME_MAX = 200


class SettingsConflict(ValidationError):
    """Refused for what the campaign has become (annotators started, a frozen plan), not for a bad value: 409."""


@dataclass(frozen=True)
class Change:
    field: str
    old: object
    new: object

    @property
    def label(self) -> str:
        return LABELS[self.field]


def _share_problem(field: str, value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        return f"The {LABELS[field]} must be a share between 0 and 1 (0.05: one claim in twenty), not {value!r}."
    return None


def _problems(campaign: Campaign, values: dict) -> list[str]:
    problems = []
    unknown = sorted(set(values) - set(LABELS))
    if unknown:
        problems.append(f"Not a setting that can change after creation: {', '.join(unknown)}.")
    for field in ("gold_rate", "repeat_rate"):
        if field in values and (problem := _share_problem(field, values[field])):
            problems.append(problem)
    if campaign.labels_only and any(field in values for field in (*PRESENTATION, "guess_question")):
        problems.append("A labels-only campaign shows no articles: presentation options and the guess question do not apply to it.")
    if len(values.get("display_name") or "") > DISPLAY_NAME_MAX:
        problems.append(f"The name shown to annotators is at most {DISPLAY_NAME_MAX} characters long.")
    if "reference_name" in values:
        name = values["reference_name"]
        if not name:
            problems.append("The reference's name cannot be empty: the guess question asks about it.")
        elif len(name) > REFERENCE_NAME_MAX:
            problems.append(f"The reference's name is at most {REFERENCE_NAME_MAX} characters long.")
    if "alt_epsilon" in values or "alt_epsilon_reason" in values:
        epsilon = values.get("alt_epsilon", campaign.alt_epsilon)
        reason = values.get("alt_epsilon_reason", campaign.alt_epsilon_reason)
        if problem := epsilon_problem(epsilon, reason):
            problems.append(problem[0].upper() + problem[1:] + ".")
    return problems


def _normalised(values: dict) -> dict:
    values = dict(values)
    for field in ("reference_name", "display_name"):
        if field in values:
            values[field] = " ".join(str(values[field] or "").split())
    if "alt_epsilon_reason" in values:
        values["alt_epsilon_reason"] = (values["alt_epsilon_reason"] or "").strip()
    if values.get("alt_epsilon", 0) is None:
        values["alt_epsilon_reason"] = ""  # no ε, no reason: the report gives no verdict
    for field in ("gold_rate", "repeat_rate", "alt_epsilon"):
        if isinstance(values.get(field), int) and not isinstance(values.get(field), bool):
            values[field] = float(values[field])
    return values


def campaign_settings_change(*, campaign: Campaign, values: dict, by=None) -> list[Change]:
    """Applies `values` (field -> new value) to the campaign and records each change; returns the
    changes (none when every value is as it was). ValidationError, with nothing changed, otherwise."""
    values = _normalised(values)
    with transaction.atomic():
        current = Campaign.objects.select_for_update().get(pk=campaign.pk)
        problems = _problems(current, values)
        if problems:
            raise ValidationError(problems)
        changes = [Change(field, getattr(current, field), new) for field, new in values.items() if getattr(current, field) != new]
        if not changes:
            return []
        # settings.HOOKS "settings_guards": calibration's frozen study plan refuses what would alter it.
        for guard in hooks("settings_guards"):
            if refusal := guard(campaign=current, changes=changes):
                raise SettingsConflict([refusal])
        rows = Campaign.objects.filter(pk=campaign.pk)
        if any(change.field in PRESENTATION for change in changes):
            # One statement: the check and the change cannot be split by a claim that commits in between.
            rows = rows.exclude(Exists(Assignment.every.filter(pair__campaign_id=OuterRef("pk"))))  # pairs and readings
        if not rows.update(**{change.field: change.new for change in changes}):
            raise SettingsConflict([STARTED])
        now = timezone.now()
        CampaignSettingChange.objects.bulk_create(
            CampaignSettingChange(campaign=current, field=c.field, old_value=c.old, new_value=c.new, changed_by=by, changed_at=now)
            for c in changes
        )
    for change in changes:
        setattr(campaign, change.field, change.new)
    return changes


def settings_history(*, campaign: Campaign, limit: int = 100) -> list[CampaignSettingChange]:
    """The latest changes first, with who made them."""
    rows = CampaignSettingChange.objects.filter(campaign=campaign).select_related("changed_by").order_by("-changed_at", "-id")
    return list(rows[:limit])


def pairs_started(campaign: Campaign) -> bool:
    """Whether any item was claimed: presentation options are fixed from then on."""
    return Assignment.every.filter(pair__campaign=campaign).exists()  # pairs and readings
