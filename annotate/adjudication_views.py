"""Adjudication's pages: staff open a queue and name adjudicators; an adjudicator records final answers."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate import adjudication_selectors as selectors
from annotate.models import Campaign
from annotate.services import adjudication, answers
from common.decorators import staff_required

PAGE = "annotate/adjudicate.html"
REFUSED_PAGE = "annotate/campaign_refused.html"


def _refused(request: HttpRequest, campaign: Campaign, exc: ValidationError, status: int = 400) -> HttpResponse:
    return render(request, REFUSED_PAGE, {"campaign": campaign, "message": " ".join(exc.messages)}, status=status)


@require_POST
@staff_required
def adjudication_open(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Opens items where annotators disagree: all of them, or by criterion (`criteria`: keys) and kind."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    keys = [key.strip() for key in request.POST.get("criteria", "").split(",") if key.strip()]
    try:
        criteria = adjudication.criteria_named(campaign=campaign, keys=keys) if keys else None
        opened, there = adjudication.adjudication_open(
            campaign=campaign, by=request.user, criteria=criteria, kind=request.POST.get("kind") or "all"
        )
    except ValidationError as exc:
        return _refused(request, campaign, exc)
    messages.success(request, f"Adjudication: {opened} item(s) opened, {there} already in the queue.")
    return redirect("campaign-adjudication", campaign.pk)


@require_POST
@staff_required
def campaign_adjudicators(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Adds (`usernames`, separated by commas or spaces) or removes (`remove`: a username) adjudicators."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if request.POST.get("remove"):
        user = get_object_or_404(User, username=request.POST["remove"])
        adjudication.campaign_adjudicator_remove(campaign=campaign, user=user)
        messages.success(request, f"{user.username} no longer adjudicates {campaign.name}.")
        return redirect("campaign-adjudication", campaign.pk)
    names = request.POST.get("usernames", "").replace(",", " ").split()
    users = list(User.objects.filter(username__in=names))
    unknown = sorted(set(names) - {user.username for user in users})
    try:
        if not names or unknown:
            raise ValidationError([f"No such account: {', '.join(unknown)}." if unknown else "Give the usernames to add."])
        added = adjudication.campaign_adjudicators_add(campaign=campaign, users=users)
    except ValidationError as exc:
        return _refused(request, campaign, exc, status=422)
    messages.success(request, f"Adjudicators added: {', '.join(u.username for u in added) or 'none new'}.")
    return redirect("campaign-adjudication", campaign.pk)


@require_POST
@staff_required
def adjudication_split(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Turns the split of adjudication by topic on (`by_topic` = on) or off."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    adjudication.campaign_set_adjudication_by_topic(campaign=campaign, by_topic=request.POST.get("by_topic") == "on")
    messages.success(request, f"Adjudication is {'split by topic' if campaign.adjudication_by_topic else 'shared'} among adjudicators.")
    return redirect("campaign-adjudication", campaign.pk)


@require_GET
@login_required
def campaign_adjudication(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The queue: for staff with the forms that manage it, for the campaign's adjudicators with links to each item."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if not (request.user.is_staff or selectors.is_adjudicator(campaign, request.user)):
        raise PermissionDenied(selectors.NOT_ADJUDICATOR)
    can_adjudicate = selectors.is_adjudicator(campaign, request.user)
    items = selectors.adjudication_queue(campaign=campaign)
    if not request.user.is_staff:
        # An adjudicator sees what they decided and gets the next item from the schedule: a list of every
        # item by topic would let them pick two pairs of one topic, whose shared article is the reference.
        items = items.filter(decided_by=request.user)
    context = {
        "campaign": campaign,
        "items": items,
        "next": selectors.next_open(campaign=campaign, user=request.user) if can_adjudicate else None,
        "counts": selectors.adjudication_counts(campaign=campaign),
        "adjudicators": campaign.adjudicators.order_by("username"),
        "kinds": adjudication.KINDS,
        "can_adjudicate": can_adjudicate,
    }
    return render(request, "annotate/adjudication_queue.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def adjudicate(request: HttpRequest, adjudication_id: int) -> HttpResponse:
    """One item: both articles, the annotators' answers, and the final answer with its reason.

    A final answer another adjudicator recorded first answers 409 with their answer shown, and so
    does a closed campaign; a protocol's refusal answers 400 with its message."""
    item = selectors.adjudication_for_user(adjudication_id=adjudication_id, user=request.user)
    status, errors = 200, []
    if request.method == "POST":
        try:
            answers.adjudication_save(
                adjudication=item, user=request.user, position=request.POST.get("position", ""), reason=request.POST.get("reason", "")
            )
        except answers.AlreadyAdjudicated as exc:
            item, status, errors = exc.adjudication, 409, [str(exc)]
        except answers.AdjudicationClosed as exc:
            status, errors = 409, exc.messages
        except ValidationError as exc:
            status, errors = 400, exc.messages
        else:
            messages.success(request, "Final answer recorded.")
            following = selectors.next_open(campaign=item.campaign, user=request.user, after=item)
            return redirect("adjudicate", following.pk) if following else redirect("campaign-adjudication", item.campaign_id)
    context = selectors.adjudication_page(adjudication=item, user=request.user)
    context.update(errors=errors, posted=request.POST if status != 200 else {})
    return render(request, PAGE, context, status=status)
