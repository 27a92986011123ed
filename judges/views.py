from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.models import Campaign
from annotate.selectors import campaign_list
from common.decorators import staff_required
from judges import recovery, selectors, services
from judges.check import judge_check
from judges.forms import JudgeForm, RunForm
from judges.models import Judge, JudgeRun
from judges.serving import judge_concurrency_warning

CAMPAIGN_PAGE = "judges/campaign.html"


@require_http_methods(["GET", "POST"])
@staff_required
def judge_list(request: HttpRequest) -> HttpResponse:
    """The judges, and the form adding one; its "Test connection" button tests the typed judge without saving it."""
    form = JudgeForm(request.POST or None, user=request.user)
    check = None
    if request.method == "POST" and form.is_valid():
        try:
            if "test" in request.POST:
                check = judge_check(judge=services.judge_build(**form.service_arguments()))
            else:
                judge, created = services.judge_create(**form.service_arguments())
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            if check is None:
                messages.success(request, f"Judge '{judge.name}' {'added' if created else 'updated'}.")
                return redirect("judge-list")
    context = {"judges": selectors.judge_list(), "campaigns": selectors.with_run_count(campaign_list()), "form": form, "check": check}
    failed = form.errors or (check is not None and not check.ok)
    return render(request, "judges/judge_list.html", context, status=422 if failed else 200)


@require_POST
@staff_required
def judge_test(request: HttpRequest, judge_id: int) -> HttpResponse:
    """One minimal call to a saved judge's endpoint (`judges.check`): the result in words."""
    judge = get_object_or_404(Judge, pk=judge_id)
    check = judge_check(judge=judge)
    if request.htmx:
        return render(request, "judges/judge_list.html#check", {"judge": judge, "check": check})
    (messages.success if check.ok else messages.error)(request, f"{judge.name}: {check.message}")
    return redirect("judge-list")


def _campaign_page(request: HttpRequest, campaign: Campaign, form: RunForm, *, status: int = 200) -> HttpResponse:
    runs = selectors.campaign_runs(campaign=campaign)
    # A run whose worker died shows as interrupted, with its Resume button, as soon as anybody looks.
    recovery.judge_runs_interrupt_dead(runs=runs)
    context = {
        "campaign": campaign,
        "runs": runs,
        "active": selectors.runs_active(runs),
        "summary": selectors.campaign_judge_summary(campaign=campaign, runs=runs),
        "form": form,
    }
    if not request.htmx:
        context["verdict_run"], context["verdicts"] = selectors.latest_run_verdicts(campaign=campaign)
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
            if not run.batch and (warning := judge_concurrency_warning(judge=run.judge, concurrency=run.concurrency)):
                messages.warning(request, f"Run #{run.pk}: {warning}")
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


@require_POST
@staff_required
def run_resume(request: HttpRequest, run_id: int) -> HttpResponse:
    """Queues a new run with an interrupted run's options (judges/recovery.py), or says why not; back to the runs."""
    run = get_object_or_404(JudgeRun.objects.select_related("campaign"), pk=run_id)
    try:
        resumed = recovery.judge_run_resume(run=run)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Run #{run.pk} resumed as run #{resumed.pk}; units already judged are not bought again.")
    return redirect("judge-campaign", run.campaign_id)
