"""The vote on one of the agents' steps beside a pair's articles (campaign.show_steps): a thin view
over `services.step_votes`, answering the step's partial for htmx."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate import selectors
from annotate.services.step_votes import step_vote_save

STEP = "annotate/step.html"


@require_POST
@login_required
def step_vote(request: HttpRequest, assignment_id: int, step_id: int) -> HttpResponse:
    # A save never shows the articles: their texts are not read (the step's own HTML is).
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, with_articles=False)
    comment = request.POST.get("comment")
    try:
        shown, saved = step_vote_save(
            assignment=assignment, step_id=step_id, vote=request.POST.get("vote", ""), comment=comment, user=request.user
        )
    except ValidationError as exc:
        if not request.htmx:
            return HttpResponse(" ".join(exc.messages), status=422, content_type="text/plain; charset=utf-8")
        position, step = selectors.step_shown(assignment, step_id)
        context = {"assignment": assignment, "position": position, "step": step, "step_errors": exc.messages}
        return render(request, STEP, context, status=422)
    # Answered from what the save read and wrote: the step and its vote are not read again.
    row = {name: getattr(shown, name) for name in ("pk", "article_id", "order", "kind", "query", "title", "html")}
    position, step = selectors.step_presented(assignment, row, None if saved is None else (saved.vote, saved.comment))
    if not request.htmx:
        return redirect(reverse("assignment", args=[assignment.pk]) + f"#a{position}-step-{step['n']}")
    return render(request, STEP, {"assignment": assignment, "position": position, "step": step})
