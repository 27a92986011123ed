"""The single-article page (a reading): one article alone, the rubric's one-article criteria, submit.

Thin views over `reading_selectors` and `services.reading_answers`, shaped like the pair page's
(`annotate.views`): the page, one criterion's save (htmx fragment, plain form, or the flush of a
page being left) and the submission, which opens the next item, pair or reading.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate import reading_selectors
from annotate.answers import Rules
from annotate.models import Criterion, ReadingAssignment
from annotate.services import claims, labelling, reading_answers

PAGE = "annotate/reading.html"


def work_url(item) -> str:
    """Where an item claimed by `claims.assignment_claim_next` is worked on: the pair page or the reading page."""
    return reverse("reading", args=[item.pk]) if isinstance(item, ReadingAssignment) else reverse("assignment", args=[item.pk])


def save_refused(request: HttpRequest, exc: ValidationError, *, flush: bool, page: str, page_view, assignment) -> HttpResponse:
    """A refused save's reply, on the pair page as here: the reasons as plain text to the page's flush
    (nobody reads its reply but the status), the status fragment of `page` to htmx, else the whole
    page (`page_view`) with the reasons."""
    if flush:
        return HttpResponse(" ".join(exc.messages), status=422, content_type="text/plain; charset=utf-8")
    if request.htmx:
        return render(request, page + "#save-status", {"save_errors": exc.messages}, status=422)
    return page_view(request, assignment, status=422, errors=exc.messages)


def _page(request, assignment, *, status=200, errors=None, show_gaps=False, refused_submit=False):
    context = reading_selectors.reading_page(assignment=assignment)
    context.update(errors=errors or [], show_gaps=show_gaps, refused_submit=refused_submit)
    return render(request, PAGE, context, status=status)


@require_GET
@login_required
def reading_page(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user)
    claims.assignment_open(assignment=assignment)
    return _page(request, assignment)


@require_POST
@login_required
def answer_save(request: HttpRequest, assignment_id: int, criterion_key: str) -> HttpResponse:
    """Saves one criterion's answer (`value`) and/or rationale, for htmx (the status fragment), a
    plain form (back to the criterion) and the page's flush on leaving (`flush=1`: 204, or a 4xx
    with the reason as plain text), as the pair page's `label_save`."""
    flush = request.POST.get("flush") == "1"
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user, with_article=False)
    criterion = get_object_or_404(Criterion, criterion_set_id=assignment.pair.campaign.criterion_set_id, key=criterion_key)
    try:
        result = reading_answers.answer_save(
            assignment=assignment,
            criterion=criterion,
            user=request.user,
            value=request.POST.get("value"),
            rationale=request.POST.get("rationale"),
        )
    except ValidationError as exc:
        return save_refused(request, exc, flush=flush, page=PAGE, page_view=_page, assignment=assignment)
    if flush:
        return HttpResponse(status=204)
    if request.htmx:
        answer = result.answer
        done, total = reading_selectors.reading_progress(assignment=assignment)
        row = reading_selectors.criterion_row(criterion, answer if answer.pk else None, Rules.of(assignment.pair.campaign))
        context = {"saved_at": answer.saved_at if answer.pk else None, "state": row.state, "done": done, "total": total, "oob": True}
        return render(request, PAGE + "#save-status", context)
    return redirect(reverse("reading", args=[assignment.pk]) + f"#c-{criterion.key}")


@require_POST
@login_required
def reading_submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        reading_answers.reading_submit(assignment=assignment, user=request.user)
    except labelling.Incomplete:
        return _page(request, assignment, status=422, show_gaps=True)
    except ValidationError as exc:
        return _page(request, assignment, status=422, errors=exc.messages, refused_submit=True)
    messages.success(request, f"Submitted: {assignment.pair.topic.title}.")
    following = claims.assignment_claim_next(campaign=assignment.pair.campaign, user=request.user)
    if following is None:
        messages.info(request, "No more work is waiting in this campaign.")
        return redirect("home")
    return redirect(work_url(following))
