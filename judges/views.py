from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.decorators import staff_required
from annotate.models import Campaign
from judges import selectors, services
from judges.forms import JudgeForm, RunForm
from judges.models import JudgeRun

CAMPAIGN_PAGE = "judges/campaign.html"


@require_http_methods(["GET", "POST"])
@staff_required
def judge_list(request: HttpRequest) -> HttpResponse:
    form = JudgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            judge, created = services.judge_create(**form.service_arguments())
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            messages.success(request, f"Judge '{judge.name}' {'added' if created else 'updated'}.")
            return redirect("judge-list")
    context = {"judges": selectors.judge_list(), "campaigns": selectors.campaign_list(), "form": form}
    return render(request, "judges/judge_list.html", context, status=422 if form.errors else 200)


def _campaign_page(request: HttpRequest, campaign: Campaign, form: RunForm, *, status: int = 200) -> HttpResponse:
    runs = selectors.campaign_runs(campaign=campaign)
    context = {
        "campaign": campaign,
        "runs": runs,
        "active": selectors.runs_active(runs),
        "summary": selectors.campaign_judge_summary(campaign=campaign, runs=runs),
        "form": form,
    }
    template = CAMPAIGN_PAGE + "#runs" if request.htmx else CAMPAIGN_PAGE
    return render(request, template, context, status=status)


@require_GET
@staff_required
def campaign_runs(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return _campaign_page(request, campaign, RunForm())


@require_POST
@staff_required
def run_start(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = RunForm(request.POST)
    if form.is_valid():
        try:
            run = services.judge_run_start(campaign=campaign, **form.service_arguments())
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            through = " through the Batch API" if run.batch else ""
            messages.success(request, f"Run #{run.pk} of {run.judge.name} queued{through}; a worker (manage.py db_worker) will pick it up.")
            return redirect("judge-campaign", campaign.pk)
    return _campaign_page(request, campaign, form, status=422)


@require_POST
@staff_required
def run_stop(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(JudgeRun.objects.select_related("campaign"), pk=run_id)
    services.judge_run_stop(run=run)
    if request.htmx:
        return _campaign_page(request, run.campaign, RunForm())
    messages.info(request, f"Run #{run.pk}: {run.get_status_display().lower()}.")
    return redirect("judge-campaign", run.campaign_id)
