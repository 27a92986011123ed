from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from annotate.gold_selectors import gold_separability
from annotate.gold_separability import SEPARABLE_AUC
from annotate.models import Campaign
from annotate.services.gold import gold_accept_separable_set, gold_pause_lift
from calibration import attention, gold, selectors
from calibration import cache as report_cache
from calibration import metrics as M
from calibration.metrics.quality import gold_accuracy
from calibration.plan.check import canonical_json, parse_statistics
from calibration.plan.study import PlanRefused, frozen_by_name, frozen_plan, plan_record, planned_pairs_warning, study_plan_freeze
from calibration.planner.labels import plan_labels_cached, plan_parameters
from calibration.report import build as reports
from calibration.report import formats as report_formats
from calibration.report import jobs as report_jobs
from calibration.report import reference as report_reference
from calibration.report.options import ReportOptions
from calibration.report.summary import dashboard_sections, dashboard_summary
from calibration.report.tables.plan import plan_tables
from common.decorators import staff_required
from interchange import FORMATS as LABEL_FORMATS
from interchange import LABEL_COLUMNS, label_rows, rows_format

PAGE = "calibration/dashboard.html"
COMPUTING_PAGE = "calibration/computing.html"
STATUS_FRAGMENT = "calibration/report_status.html"
# Without JavaScript, the computing page reloads itself this often (with it, htmx polls the status every 2 s).
COMPUTING_REFRESH = 5
# The dashboard job's stages, in order, as the computing page names them.
JOB_STAGES = {
    "disagreements": "sorting the disagreements",
    "report": "reading the labels and computing the figures (agreement, rankings, intervals)",
    "charts": "drawing the charts",
    "page": "laying out the tables",
}
PLAN_PAGE = "calibration/plan.html"
TABLE_PAGE = "calibration/table.html"
STUDY_PLAN_PAGE = "calibration/study_plan.html"


def _campaign(campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.select_related("criterion_set", "reference_system"), pk=campaign_id)


def _browser(campaign: Campaign, stamp: tuple, requested: str | None = None, judge: str | None = None) -> dict:
    criteria = list(campaign.criterion_set.criteria.select_related("category").order_by("order"))
    requested = requested or (criteria[0].key if criteria else "")
    # Shared by every process while the campaign's data stay the same (a crowd's votes and 65
    # judges' verdicts took a second to sort each time).
    result = report_cache.computed_once(
        (campaign.pk, "disagreements", requested, judge, stamp),
        lambda: selectors.disagreements(campaign=campaign, criterion_key=requested, judge_name=judge),
        what=f"disagreements of campaign {campaign.pk}",
    )
    return {"campaign": campaign, "criteria": criteria, "requested_criterion": requested, "judge": judge, "browser": result}


def _options(request: HttpRequest) -> ReportOptions:
    """The report options of the query string (ensembles, the convention, the human reference ...);
    ValueError with the reason for a bad one."""
    return ReportOptions.from_query(request.GET, ensemble_values=_ensemble_values(request))


def _bad_request(request: HttpRequest, exc: ValueError) -> HttpResponse:
    """400 with the reason: the whole page with the site's navigation, or the sentence alone for htmx."""
    if request.htmx:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    return render(request, "refused.html", {"message": str(exc)}, status=400)


@require_GET
@staff_required
def dashboard(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Judge table, charts, human ceiling, leaderboards and the disagreement browser.

    An htmx request from the browser's form gets the browser fragment alone,
    without computing the (cached, but heavy when cold) report. Tables longer
    than a page show their first page, with links to the next (`report_table`).

    The report is never computed here (a big campaign's takes longer than a page may): what the
    shared cache lacks is computed by a background job (`calibration.report.jobs`) while the page
    shows the last report of the same options, marked as such, or how far the job is.
    """
    campaign = _campaign(campaign_id)
    stamp = selectors.calibration_stamp(campaign=campaign)
    if request.htmx and not request.htmx.history_restore_request:
        browser = _browser(campaign, stamp, request.GET.get("criterion"), request.GET.get("judge") or None)
        return render(request, PAGE + "#disagreements", browser)
    try:
        options = _options(request)
    except ValueError as exc:
        return _bad_request(request, exc)
    return _cached_page(request, campaign, stamp, options) or _not_ready(request, campaign, stamp, options)


def _cached_page(request: HttpRequest, campaign: Campaign, stamp: tuple, options: ReportOptions, **stale) -> HttpResponse | None:
    """The dashboard from the report and charts in the shared cache for `stamp`, or None when they are not there."""
    try:
        with report_cache.cached_only():
            report, charts = reports.report_and_charts_cached(campaign, options, stamp=stamp)
    except report_cache.Missing:
        return None
    return _dashboard_page(request, campaign, stamp, report, charts, options, **stale)


def _dashboard_page(
    request: HttpRequest, campaign: Campaign, stamp: tuple, report: dict, charts: dict, options: ReportOptions, *, stale=None, status=None
) -> HttpResponse:
    """The dashboard of `report`; `stale`: it is an earlier one (`report_jobs.latest`, with "current": the stamp of now)."""
    criterion, judge = request.GET.get("criterion"), request.GET.get("judge") or None
    browser = None
    if stale is not None:  # the earlier report's disagreements, when they are still there
        try:
            with report_cache.cached_only():
                browser = _browser(campaign, stamp, criterion, judge)
        except report_cache.Missing:
            pass
    if browser is None:
        browser = _browser(campaign, stale["current"] if stale else stamp, criterion, judge)
    context = {**browser, **_dashboard_context(campaign, stamp, report, charts, options), "members": request.GET.getlist("member")}
    if stale is not None:
        context.update(stale=stale, status=status, status_url=_status_url(campaign, options, stamp), refresh=COMPUTING_REFRESH)
    return render(request, PAGE, context)


def _status_url(campaign: Campaign, options: ReportOptions, shown: tuple | None) -> str:
    """The job's status, for a page showing the report of `shown` (a stamp; None: no report)."""
    query = "&".join(q for q in (options.query, urlencode({"shown": report_jobs.stamp_digest(shown)})) if q)
    return f"{reverse('calibration-report-status', args=[campaign.pk])}?{query}"


def _job(campaign: Campaign, stamp: tuple, options: ReportOptions) -> report_jobs.Job:
    # What the report's cache key holds beside the stamp and the options: the campaign's own settings.
    settings = (campaign.reference_system_id, campaign.neutral_emphasis, campaign.alt_epsilon, campaign.alt_epsilon_reason)
    return report_jobs.Job(campaign.pk, stamp, options.query, tuple(JOB_STAGES.items()), settings)


def _job_body(campaign: Campaign, stamp: tuple, options: ReportOptions):
    """What the first view of the dashboard with these options needs, computed into the shared cache."""

    def body(stage) -> dict:
        stage("disagreements")  # first: quick, and what a page showing an earlier report asks for at once
        browser = _browser(campaign, stamp)
        stage("report")
        report = reports.report_cached(campaign, options, stamp=stamp)
        stage("charts")
        report, charts = reports.report_and_charts_cached(campaign, options, stamp=stamp)
        stage("page")
        # Rendering fills the cached fragment (`{% cache ... report_key %}`); the page itself is dropped.
        render_to_string(PAGE, {**browser, **_dashboard_context(campaign, stamp, report, charts, options)})
        verdicts = sum(j["n_verdicts"] or 0 for j in report["judges"] if not j["members"])
        return {"generated_at": report["generated_at"], "labels": report["humans"]["n_labels"], "verdicts": verdicts}

    return body


def _not_ready(request: HttpRequest, campaign: Campaign, stamp: tuple, options: ReportOptions) -> HttpResponse:
    """The dashboard while its report is computed: the earlier report of these options, marked, or the job's progress."""
    job, body = _job(campaign, stamp, options), _job_body(campaign, stamp, options)
    status = report_jobs.ensure(job, body)
    if status.state == "ready":  # just computed here (CALIBRATION_BACKGROUND off), or done before with an entry expired since
        if page := _cached_page(request, campaign, stamp, options):
            return page
        report_jobs.restart(job)
        status = report_jobs.ensure(job, body)
        if status.state == "ready" and (page := _cached_page(request, campaign, stamp, options)):
            return page
    if status.state == "failed" and status.refused:
        return _bad_request(request, ValueError(status.error))
    previous = report_jobs.latest(job)
    stale = None if previous is None else {**previous, "current": stamp}
    if stale and (page := _cached_page(request, campaign, previous["stamp"], options, stale=stale, status=status)):
        return page
    # No report to show (an earlier one's entries may have expired: the page waits for the new one, not for that).
    shown = None if previous is None else previous["stamp"]
    context = {"campaign": campaign, "status": status, "status_url": _status_url(campaign, options, shown), "refresh": COMPUTING_REFRESH}
    return render(request, COMPUTING_PAGE, context, status=500 if status.state == "failed" else 202)


@require_http_methods(["GET", "POST"])
@staff_required
def report_status(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The dashboard's job (same options in the query string, and `shown`: which report the page shows):
    its progress as the fragment the page polls; once the report is ready, or a later one than the page's,
    htmx is told to reload the page. POST asks again after a failure."""
    campaign = _campaign(campaign_id)
    try:
        options = _options(request)
    except ValueError as exc:
        return _bad_request(request, exc)
    stamp = selectors.calibration_stamp(campaign=campaign)
    job = _job(campaign, stamp, options)
    if request.method == "POST":
        report_jobs.forget_error(job)
    status = report_jobs.ensure(job, _job_body(campaign, stamp, options))  # starts it again if its process died
    dashboard_url = reverse("calibration-dashboard", args=[campaign.pk]) + (f"?{options.query}" if options.query else "")
    if not request.htmx:
        return redirect(dashboard_url)
    shown = request.GET.get("shown", "")
    # Ready, or a later report than the page's is there (the labels changed again while it was computed): reload.
    if status.state == "ready" or report_jobs.newer_than(job, shown):
        return HttpResponseClientRefresh()
    return render(request, STATUS_FRAGMENT, {"status": status, "status_url": request.get_full_path()})


def _dashboard_context(campaign: Campaign, stamp: tuple, report: dict, charts: dict, options: ReportOptions) -> dict:
    # Only computed when the page's report part is not in the cache already (`report_key`).
    tables = SimpleLazyObject(lambda: report_formats.tables(report))
    pages = SimpleLazyObject(lambda: {key: table.page(1) for key, table in tables.items()})
    return {
        "report": report,
        "charts": charts,
        "tables": tables,
        "pages": pages,
        "summary": SimpleLazyObject(lambda: dashboard_summary(report)),
        "sections": SimpleLazyObject(
            lambda: dashboard_sections(
                pages,
                charts,
                pointwise=bool(report.get("pointwise")),
                category_note=bool((ci := report["parameters"].get("category_intervals")) and not ci.get("judges_computed")),
            )
        ),
        "heading": report_formats.heading(report),
        # Outside the cached part of the page: freezing a plan changes it without changing the data.
        "plan_page": plan_tables(report)["plan"].page(1),
        "report_key": report_cache.cache_key(
            (
                campaign.pk,
                "dashboard",
                stamp,
                report["parameters"]["rounds"],
                options.query,
                campaign.alt_epsilon,
                campaign.alt_epsilon_reason,
            )
        ),
        "formats": list(report_formats.FORMATS),
        "judge_names": [j["name"] for j in report["judges"] if not j["members"]],
        "ensemble_values": options.ensemble_values,
        "ensemble_query": urlencode([("ensemble", v) for v in options.ensemble_values]),
        "report_query": options.query,
        "convention": options.convention,
        "swap_policies": M.SWAP_POLICIES,
        "unparsable_policies": M.UNPARSABLE_POLICIES,
        "human_reference": options.human_reference,
        "human_references": report_reference.REFERENCES,
        "majority_ties": options.majority_ties,
        "majority_ties_choices": M.MAJORITY_TIES,
        "sensitivity": options.sensitivity,
    }


def dashboard_warm(campaign: Campaign) -> str:
    """What the first visit of the default dashboard computes, done ahead (the task worker, after an
    import, a judge run or submissions): the dashboard's job for the default options, run here.
    "ready", "busy" (a web process is at it) or "failed"."""
    stamp = selectors.calibration_stamp(campaign=campaign)
    options = ReportOptions()
    return report_jobs.run_here(_job(campaign, stamp, options), _job_body(campaign, stamp, options))


@require_GET
@staff_required
def report_table(request: HttpRequest, campaign_id: int, key: str) -> HttpResponse:
    """One page of one of the report's tables (`?page=2`, with the dashboard's ensembles and convention):
    a page of its own, or, for htmx, the table's section on the dashboard."""
    campaign = _campaign(campaign_id)
    try:
        options = _options(request)
        number = _page_number(request.GET.get("page", "1"))
        report = reports.report_cached(campaign, options)
    except ValueError as exc:
        return _bad_request(request, exc)
    every = report_formats.tables(report)
    if key not in every:
        raise Http404(f"No report table '{key}'.")
    context = {"campaign": campaign, "page": every[key].page(number), "report_query": options.query}
    fragment = request.htmx and not request.htmx.history_restore_request
    return render(request, TABLE_PAGE + "#paged" if fragment else TABLE_PAGE, context)


def _page_number(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"page must be a whole number from 1, not '{value}'")
    return int(value)


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
    """The report in a format; `report.csv?table=KEY` is one of its tables, every row, as CSV."""
    if fmt not in report_formats.FORMATS:
        raise Http404(f"No report format '{fmt}'.")
    campaign = _campaign(campaign_id)
    table = request.GET.get("table")
    try:
        options = _options(request)
        if table is not None and fmt != "csv":
            raise ValueError("table= goes with the CSV format only (report.csv?table=…)")
        if fmt == "html":
            report, charts = reports.report_and_charts_cached(campaign, options)
            body = report_formats.render_html(report, charts)
        else:
            report = reports.report_cached(campaign, options)
            body = report_formats.render_table_csv(report, table) if table is not None else report_formats.render(report, fmt)
    except ValueError as exc:
        return _bad_request(request, exc)
    content_type = report_formats.FORMATS[fmt][0]
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    name = report_formats.download_name(campaign.name, fmt)
    if table is not None:
        name = name.removesuffix(".csv") + f"-{table}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    if fmt == "html":
        # Its own policy, which the site's middleware leaves alone: the file's inline stylesheet and nothing else.
        response["Content-Security-Policy"] = report_formats.html_policy(body)
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


@require_GET
@staff_required
def gold_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Staff: each rater's accuracy on the campaign's known-answer pairs, with its 95% CI and n, and
    who the pause rule stops now."""
    return _gold_render(request, _campaign(campaign_id))


def _gold_render(request: HttpRequest, campaign: Campaign, *, error: str = "", status: int = 200) -> HttpResponse:
    inputs = gold.gold_inputs(campaign=campaign)
    scores = gold_accuracy(inputs.table, inputs.expected, kinds=inputs.kinds)
    kinds: dict[str, int] = {}
    for kind in inputs.kinds.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    paused = set(gold.paused_usernames(campaign=campaign))
    rows = []
    for s in scores:
        name = s.rater.removeprefix(selectors.HUMAN_PREFIX)
        rows.append(
            {"rater": name, "kind": s.rater_kind, "a": s.accuracy, "ties": s.n_ties, "by_kind": s.by_kind, "paused": name in paused}
        )
    context = {
        "campaign": campaign, "rows": rows, "kinds": sorted(kinds.items()), "n_pairs": inputs.n_pairs, "error": error,
        "separability": gold_separability(campaign=campaign), "separable_auc": SEPARABLE_AUC,
    }  # fmt: skip
    return render(request, "calibration/gold.html", context, status=status)


@require_POST
@staff_required
def gold_accept_separable(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Staff: let kinds of gold pair the text sets apart drive the pause rule (`accept` = on), or not."""
    campaign = _campaign(campaign_id)
    gold_accept_separable_set(campaign=campaign, accept=request.POST.get("accept") == "on")
    return redirect("calibration-gold", campaign.pk)


@require_GET
@staff_required
def attention_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Staff: each annotator's speed (per criterion and per pair, against their own median and the
    campaign's) and rationales repeated verbatim, as flags with counts and n. Never a rejection."""
    campaign = _campaign(campaign_id)
    flags = attention.attention_flags(campaign=campaign)
    speed = {}
    for row in flags.speed.raters:
        speed.setdefault(row.rater, {})[row.level] = row
    context = {
        "campaign": campaign,
        "flags": flags,
        "speed": sorted(speed.items()),
        "criterion_medians": sorted(flags.speed.campaign_median.get("criterion", {}).items()),
        "pair_median": flags.speed.campaign_median.get("pair", {}).get(""),
    }
    return render(request, "calibration/attention.html", context)


@require_POST
@staff_required
def gold_lift(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Staff lift an annotator's gold pause (`annotator`: a username); 400 with the reason otherwise."""
    campaign = _campaign(campaign_id)
    try:
        gold_pause_lift(campaign=campaign, username=request.POST.get("annotator", ""), by=request.user)
    except ValidationError as exc:
        return _gold_render(request, campaign, error=" ".join(exc.messages), status=400)
    return redirect("calibration-gold", campaign.pk)


LABEL_CONTENT_TYPES = {"csv": "text/csv", "jsonl": "application/jsonl"}


@require_GET
@staff_required
def labels_download(request: HttpRequest, campaign_id: int, fmt: str) -> StreamingHttpResponse:
    """The campaign's labels file, byte for byte what `export_labels --out FILE.<fmt>` writes (the
    human and judge rows; the overall, spans and calls files stay with the command)."""
    if fmt not in LABEL_FORMATS:
        raise Http404(f"No labels format '{fmt}'.")
    campaign = _campaign(campaign_id)
    response = StreamingHttpResponse(
        rows_format(label_rows(campaign), fmt=fmt, columns=LABEL_COLUMNS),
        content_type=f"{LABEL_CONTENT_TYPES[fmt]}; charset=utf-8",
    )
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in campaign.name).strip("-") or "campaign"
    response["Content-Disposition"] = f'attachment; filename="labels-{safe}.{fmt}"'
    return response


def _optional_float(value: str | None, name: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number, got '{value}'") from None


@staff_required
@require_http_methods(["GET", "POST"])
def study_plan(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The campaign's frozen study plan (GET), or freezing it (POST: planned_pairs, statistics, alpha, delta).

    A refusal (labels exist, a plan is frozen already) answers 409 with the reason; a bad value 400.
    """
    campaign = _campaign(campaign_id)
    errors, status = [], 200
    if request.method == "POST":
        try:
            pairs = request.POST.get("planned_pairs", "")
            if not pairs.strip().isdigit():
                raise ValueError(f"planned pairs must be a whole number of at least 1, got '{pairs}'")
            record = plan_record(
                campaign,
                planned_pairs=int(pairs),
                statistics=parse_statistics(",".join(request.POST.getlist("statistics"))),
                alpha=_optional_float(request.POST.get("alpha"), "alpha"),
                delta=_optional_float(request.POST.get("delta"), "delta"),
            )
            study_plan_freeze(campaign=campaign, user=request.user, record=record)
        except ValueError as exc:
            errors, status = [str(exc)], 400
        except PlanRefused as exc:
            errors, status = [str(exc)], 409
        else:
            # The plan's page warns of a planned n the campaign cannot give.
            return redirect("calibration-study-plan", campaign_id=campaign.pk)
    plan = frozen_plan(campaign)
    record_json = canonical_json(plan.record) if plan else None
    context = {
        "campaign": campaign,
        "plan": plan,
        "record_json": record_json,
        "frozen_by": frozen_by_name(plan) if plan else None,
        # A refusal is the whole page again, with the reason above it (never a bare line of text).
        "errors": errors,
        "planned_warning": planned_pairs_warning(campaign=campaign, planned_pairs=plan.record.get("planned_pairs") or 0) if plan else None,
    }
    return render(request, STUDY_PLAN_PAGE, context, status=status)
