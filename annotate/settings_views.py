"""The campaign's settings page for staff: what may change after creation (docs/how-to/campaign-settings.md)."""

from __future__ import annotations

import math

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotate.models import Campaign, GoldPair
from annotate.services import alt_epsilon, campaign_settings
from common.decorators import staff_required

PAGE = "annotate/campaign_settings.html"


def _share(request: HttpRequest, field: str, problems: list[str]) -> float | None:
    text = request.POST.get(field, "").strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        problems.append(f"The {campaign_settings.LABELS[field]} must be a number between 0 and 1, not '{text[:40]}'.")
        return None
    return value


def _values(request: HttpRequest, campaign: Campaign, problems: list[str]) -> dict:
    """The posted form as setting values. Presentation options are in the form only before the first claim."""
    values = {"display_name": request.POST.get("display_name", "")}
    for field in ("gold_rate", "repeat_rate"):
        if (value := _share(request, field, problems)) is not None:
            values[field] = value
    if not campaign.labels_only:
        if request.POST.get("presentation") == "1":
            for field in campaign_settings.PRESENTATION:
                values[field] = request.POST.get(field) == "1"
        values["guess_question"] = request.POST.get("guess_question") == "1"
        values["reference_name"] = request.POST.get("reference_name", "")
    try:
        values["alt_epsilon"] = alt_epsilon.parse_epsilon(request.POST.get("alt_epsilon"))
    except ValueError as exc:
        problems.append(f"{str(exc)[0].upper()}{str(exc)[1:]}.")
    values["alt_epsilon_reason"] = request.POST.get("alt_epsilon_reason", "")
    return values


def _changed_note(changes: list[campaign_settings.Change]) -> str:
    return "Changed: " + "; ".join(f"{c.label} {c.old!r} → {c.new!r}" for c in changes) + "."


@require_http_methods(["GET", "POST"])
@staff_required
def campaign_settings_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    errors: list[str] = []
    status = 200
    if request.method == "POST":
        values = _values(request, campaign, errors)
        if errors:
            status = 400
        else:
            try:
                changes = campaign_settings.campaign_settings_change(campaign=campaign, values=values, by=request.user)
            except ValidationError as exc:
                errors = exc.messages
                status = 409 if isinstance(exc, campaign_settings.SettingsConflict) else 400
            else:
                messages.success(request, _changed_note(changes) if changes else "Nothing changed: every value was as before.")
                return redirect("campaign-settings", campaign.pk)
        campaign.refresh_from_db()
    gold_pairs = GoldPair.objects.filter(pair__campaign=campaign).count()
    context = {
        "campaign": campaign,
        "errors": errors,
        "started": campaign_settings.pairs_started(campaign),
        "gold_pairs": gold_pairs,
        "history": campaign_settings.settings_history(campaign=campaign),
        "labels": campaign_settings.LABELS,
    }
    return render(request, PAGE, context, status=status)
