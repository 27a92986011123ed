"""The dashboard's cascade panel (selective judging, `calibrate_selective`) and its "send abstained
pairs to humans" action. Staff only, like the rest of the dashboard."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.models import Campaign
from annotate.services.campaigns import NAME_TAKEN_CODE
from calibration.cascade import estimate_text, judges_with_confidences, selective_cascade_cached, usd_text
from calibration.services import abstained_pairs_send
from common.decorators import staff_required

CASCADE_PAGE = "calibration/cascade.html"
DEFAULTS = (("alpha", "0.15"), ("delta", "0.1"), ("human_cost", ""))
HUMAN_COST_ASSUMPTION = (
    "Costs assume every item humans label costs the human cost per item given here, and a judge costs what its calls on "
    "this campaign cost over the items it judged; the cascade's cost is its judges' calls on the items that reach them "
    "plus humans on the items no judge accepts, against humans on every item."
)


def _form(data: QueryDict, available: list[str]) -> dict:
    form = {key: data.get(key, default).strip() for key, default in DEFAULTS}
    form["judges"] = data.get("judges", ",".join(available)).strip()
    form["name"] = data.get("name", "").strip()
    return form


def _judge_names(form: dict) -> list[str]:
    return [n.strip() for n in form["judges"].split(",") if n.strip()]


def _rows(out: dict) -> dict:
    """The cascade's figures as the panel shows them (texts with their n and CI)."""
    n = out["n_calibration"] or 1
    stages = []
    for i, stage in enumerate(out["stages"], 1):
        hold = stage["holdout"]
        stages.append({
            "order": i, "judge": stage["judge"], "threshold": "none" if stage["threshold"] is None else f"{stage['threshold']:.4g}",
            "asked": stage["n_reaching"], "accepted": stage["n_accepted"], "coverage": estimate_text(stage["coverage"]),
            "agreement": estimate_text(stage["agreement"]), "guarantee": stage["guarantee"],
            "cost_per_accepted": "cost unknown" if stage["cost_per_accepted"] is None else usd_text(stage["cost_per_accepted"]),
            "heldout": "no held-out item" if hold is None else f"{estimate_text(hold['agreement'])}, accepts {hold['n_accepted']} of {hold['n']}",
            "share": f"{stage['n_accepted'] / n:.1%}",
        })  # fmt: skip
    hold = out["holdout"]
    return {
        "stages": stages,
        "target": f"{out['target']:g}",
        "human_share": f"{out['human_share']:.1%}",
        "agreement": estimate_text(out["agreement"]),
        "heldout": None if hold is None else {**hold, "agreement": estimate_text(hold["agreement"])},
        "cost": None if out["cost"] is None else usd_text(out["cost"]),
        "all_human_cost": None if out["all_human_cost"] is None else usd_text(out["all_human_cost"]),
        "saving": None if out["saving"] is None else f"{out['saving']:.1%}",
    }


def _panel(request: HttpRequest, campaign: Campaign, data: QueryDict, *, send_error: str = "", status: int = 200) -> HttpResponse:
    available = judges_with_confidences(campaign=campaign)
    form = _form(data, available)
    context = {"campaign": campaign, "form": form, "available": available, "out": None, "rows": None, "error": "",
               "send_error": send_error, "assumption": HUMAN_COST_ASSUMPTION}  # fmt: skip
    names = _judge_names(form)
    if names:
        try:
            out = selective_cascade_cached(
                campaign=campaign, judge_names=names, alpha=form["alpha"], delta=form["delta"], human_cost=form["human_cost"]
            )
        except ValueError as exc:
            context["error"] = str(exc)
            status = 400
        else:
            context.update(out=out, rows=_rows(out))
    if status >= 400 and request.htmx:
        status = 422  # so that htmx swaps the panel with its message in (as the planner does)
    fragment = request.htmx and not request.htmx.history_restore_request
    return render(request, CASCADE_PAGE + "#cascade" if fragment else CASCADE_PAGE, context, status=status)


@require_GET
@staff_required
def cascade(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The cascade panel: a page of its own, or the dashboard's fragment for htmx. A bad α, δ or
    human cost, or a judge without confidences, answers 400 (422 for htmx) with the message."""
    return _panel(request, get_object_or_404(Campaign.objects.select_related("criterion_set"), pk=campaign_id), request.GET)


@require_POST
@staff_required
def cascade_send(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Create a campaign (`name`) of the pairs the cascade leaves to humans; then go to it. 400 (422
    for htmx) with the panel and the reason otherwise (a taken name, bad values, no pair)."""
    campaign = get_object_or_404(Campaign.objects.select_related("criterion_set"), pk=campaign_id)
    form = _form(request.POST, [])
    try:
        if not form["name"]:
            raise ValidationError(["Give the new campaign a name."])
        sent = abstained_pairs_send(
            campaign=campaign, name=form["name"], judge_names=_judge_names(form), alpha=form["alpha"], delta=form["delta"],
            human_cost=form["human_cost"],
        )  # fmt: skip
    except ValidationError as exc:
        # A name taken (even by a request that won a race) is a conflict; anything else is bad input.
        status = 409 if any(error.code == NAME_TAKEN_CODE for error in exc.error_list) else 400
        return _panel(request, campaign, request.POST, send_error=" ".join(exc.messages), status=status)
    messages.success(
        request,
        f"Campaign '{sent.campaign.name}' created with {sent.n_pairs} of {sent.n_candidates} pairs, each with an item no judge accepts.",
    )
    return redirect("campaign-detail", sent.campaign.pk)
