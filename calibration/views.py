from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotate.decorators import staff_required
from annotate.models import Campaign
from calibration import report as reports
from calibration import report_formats
from calibration import selectors
from calibration.planner import plan_labels_cached, plan_parameters

PAGE = "calibration/dashboard.html"
PLAN_PAGE = "calibration/plan.html"


def _campaign(campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.select_related("criterion_set", "reference_system"), pk=campaign_id)


def _browser(request: HttpRequest, campaign: Campaign) -> dict:
    criteria = list(campaign.criterion_set.criteria.select_related("category").order_by("order"))
    requested = request.GET.get("criterion") or (criteria[0].key if criteria else "")
    judge = request.GET.get("judge") or None
    result = selectors.disagreements(campaign=campaign, criterion_key=requested, judge_name=judge)
    return {"campaign": campaign, "criteria": criteria, "requested_criterion": requested, "judge": judge, "browser": result}


@require_GET
@staff_required
def dashboard(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Judge table, charts, human ceiling, leaderboards and the disagreement browser.

    An htmx request from the browser's form gets the browser fragment alone,
    without computing the (cached, but heavy when cold) report.
    """
    campaign = _campaign(campaign_id)
    browser = _browser(request, campaign)
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, PAGE + "#disagreements", browser)
    values = _ensemble_values(request)
    try:
        report, charts = reports.report_and_charts_cached(campaign, ensembles=reports.parse_ensembles(values))
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    context = {
        **browser,
        "report": report,
        "charts": charts,
        "tables": report_formats.tables(report),
        "formats": list(report_formats.FORMATS),
        "judge_names": [j["name"] for j in report["judges"] if not j["members"]],
        "ensemble_values": values,
        "members": request.GET.getlist("member"),
        "ensemble_query": urlencode([("ensemble", v) for v in values]),
    }
    return render(request, PAGE, context)


def _ensemble_values(request: HttpRequest) -> list[str]:
    """Ensembles asked for, as `a,b,c` texts: each `ensemble=`, plus one from the ticked `member` boxes."""
    values = [v for v in request.GET.getlist("ensemble") if v.strip()]
    ticked = request.GET.getlist("member")
    if ticked:
        values.append(",".join(ticked))
    return list(dict.fromkeys(values))


@require_GET
@staff_required
def download(request: HttpRequest, campaign_id: int, fmt: str) -> HttpResponse:
    if fmt not in report_formats.FORMATS:
        raise Http404(f"No report format '{fmt}'.")
    campaign = _campaign(campaign_id)
    try:
        ensembles = reports.parse_ensembles(_ensemble_values(request))
        if fmt == "html":
            report, charts = reports.report_and_charts_cached(campaign, ensembles=ensembles)
            body = report_formats.render_html(report, charts)
        else:
            body = report_formats.render(reports.report_cached(campaign, ensembles=ensembles), fmt)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    content_type = report_formats.FORMATS[fmt][0]
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{report_formats.download_name(campaign.name, fmt)}"'
    return response


@require_GET
@staff_required
def plan(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The label planner (`plan_labels`) as a page, or as the dashboard panel's fragment for htmx
    (which polls it: a campaign in progress shows its plan as labels arrive). A bad parameter
    answers 400 (422 for htmx, so that the message replaces the panel) with the message shown."""
    campaign = _campaign(campaign_id)
    form = {key: request.GET.get(key, default) for key, default in (("target", "0.03"), ("power", "0.8"), ("batch", "50"))}
    context: dict = {"campaign": campaign, "query": request.GET, "form": form, "plan": None, "error": None}
    status = 200
    try:
        context["plan"] = plan_labels_cached(campaign=campaign, **plan_parameters(request.GET))
    except ValueError as exc:
        context["error"] = str(exc)
        status = 422 if request.htmx else 400
    template = PLAN_PAGE + "#planner" if request.htmx and not request.htmx.history_restore_request else PLAN_PAGE
    return render(request, template, context, status=status)
