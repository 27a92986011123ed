from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate import campaigns as work
from annotate import selectors
from annotate.decorators import staff_required
from annotate.models import Campaign, Criterion, Topic

PAGE = "annotate/assignment.html"


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_staff:
        return redirect("campaign-list")
    return render(request, "annotate/home.html", {"queue": selectors.annotator_queue(user=request.user)})


# --- researchers' catalogue -----------------------------------------------------


@require_GET
@staff_required
def topic_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/topic_list.html", {"topics": selectors.topic_list()})


def _pick(articles, key, fallback):
    for article in articles:
        if article.system.key == key:
            return article
    return fallback


@require_GET
@staff_required
def topic_compare(request: HttpRequest, topic_id: int) -> HttpResponse:
    """Researcher preview of two articles exactly as annotators will see them, with their sources named."""
    topic = get_object_or_404(Topic, pk=topic_id)
    articles = selectors.topic_articles(topic=topic)
    left = right = None
    if articles:
        left = _pick(articles, request.GET.get("left"), articles[0])
        others = [a for a in articles if a.pk != left.pk]
        right = _pick(others, request.GET.get("right"), others[0] if others else None)
    columns = [article for article in (left, right) if article is not None]
    return render(request, "annotate/topic_compare.html", {"topic": topic, "articles": articles, "columns": columns})


# --- annotators' work -----------------------------------------------------------


@require_POST
@login_required
def claim_next(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    assignment = work.assignment_claim_next(campaign=campaign, user=request.user)
    if assignment is None:
        messages.info(request, f"Nothing left to annotate in {campaign.name}. Thank you!")
        return redirect("home")
    return redirect("assignment", assignment.pk)


def _page(request, assignment, *, status=200, errors=None):
    context = selectors.annotation_page(assignment=assignment)
    context["errors"] = errors or []
    return render(request, PAGE, context, status=status)


@require_GET
@login_required
def assignment_page(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    work.assignment_open(assignment=assignment)
    return _page(request, assignment)


@require_POST
@login_required
def label_save(request: HttpRequest, assignment_id: int, criterion_key: str) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    criterion = get_object_or_404(Criterion, criterion_set_id=assignment.pair.campaign.criterion_set_id, key=criterion_key)
    try:
        result = work.label_save(
            assignment=assignment,
            criterion=criterion,
            user=request.user,
            position=request.POST.get("position"),
            rationale=request.POST.get("rationale"),
        )
    except ValidationError as exc:
        if request.htmx:
            return render(request, PAGE + "#save-status", {"save_errors": exc.messages}, status=422)
        return _page(request, assignment, status=422, errors=exc.messages)
    if request.htmx:
        done = assignment.labels.exclude(winner="").count()
        total = assignment.pair.campaign.criterion_set.criteria.count()
        return render(request, PAGE + "#save-status", {"saved_at": result.label.saved_at, "done": done, "total": total, "oob": True})
    return redirect(reverse("assignment", args=[assignment.pk]) + f"#c-{criterion.key}")


@require_POST
@login_required
def overall_save(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        work.overall_save(assignment=assignment, user=request.user, value=request.POST.get("overall", ""))
    except ValidationError as exc:
        if request.htmx:
            return render(request, PAGE + "#save-status", {"save_errors": exc.messages}, status=422)
        return _page(request, assignment, status=422, errors=exc.messages)
    if request.htmx:
        return render(request, PAGE + "#save-status", {"saved_at": assignment.last_activity_at})
    return redirect(reverse("assignment", args=[assignment.pk]) + "#overall")


@require_POST
@login_required
def submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        work.assignment_submit(assignment=assignment, user=request.user)
    except ValidationError as exc:
        return _page(request, assignment, status=422, errors=exc.messages)
    messages.success(request, f"Submitted: {assignment.pair.topic.title}.")
    following = work.assignment_claim_next(campaign=assignment.pair.campaign, user=request.user)
    if following is None:
        messages.info(request, "No more pairs are waiting in this campaign.")
        return redirect("home")
    return redirect("assignment", following.pk)


@require_POST
@login_required
def span_add(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        work.span_add(
            assignment=assignment,
            position=request.POST.get("position", ""),
            start=int(request.POST.get("start", "-1")),
            end=int(request.POST.get("end", "-1")),
            quote=request.POST.get("quote", ""),
            polarity=int(request.POST.get("polarity", "0")),
            comment=request.POST.get("comment", ""),
        )
    except (ValueError, ValidationError) as exc:
        errors = exc.messages if isinstance(exc, ValidationError) else ["Offsets and polarity must be whole numbers."]
        return render(request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "span_errors": errors}, status=422)
    return render(request, PAGE + "#spans", selectors.annotation_page(assignment=assignment))


@require_POST
@login_required
def span_delete(request: HttpRequest, assignment_id: int, span_id: int) -> HttpResponse:
    assignment = work.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        work.span_delete(assignment=assignment, span_id=span_id)
    except ValidationError as exc:
        return render(request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "span_errors": exc.messages}, status=422)
    if not request.htmx:
        return redirect(reverse("assignment", args=[assignment.pk]) + "#spans")
    return render(request, PAGE + "#spans", selectors.annotation_page(assignment=assignment))


# --- researchers' campaigns -------------------------------------------------------


@require_GET
@staff_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/campaign_list.html", {"campaigns": selectors.campaign_list()})


@staff_required
def campaign_new(request: HttpRequest) -> HttpResponse:
    from annotate.forms import CampaignForm

    if request.method not in ("GET", "POST"):
        return HttpResponse(status=405)
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = work.campaign_create(**form.service_arguments())
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            messages.success(request, f"Campaign '{campaign.name}' created with {campaign.pairs.count()} pairs.")
            return redirect("campaign-detail", campaign.pk)
    return render(request, "annotate/campaign_new.html", {"form": form}, status=422 if form.errors else 200)


@require_GET
@staff_required
def campaign_detail(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("criterion_set"), pk=campaign_id)
    return render(request, "annotate/campaign_detail.html", {"campaign": campaign, **selectors.campaign_progress(campaign=campaign)})


@require_POST
@staff_required
def campaign_toggle(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    work.campaign_set_open(campaign=campaign, is_open=request.POST.get("open") == "1")
    return redirect("campaign-detail", campaign.pk)


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    return render(request, "403.html", {"reason": str(exception or "")}, status=403)
