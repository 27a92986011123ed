from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import PasswordResetConfirmView
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate import alignment_selectors, flag_selectors, reading_selectors, selectors
from annotate.answers import Rules
from annotate.models import Campaign, Criterion, Item, Pair, Topic
from annotate.removal import removed_segments
from annotate.services import alignments, alt_epsilon, answers, campaign_settings, campaigns, claims, flags, guesses, labelling
from common.decorators import staff_required

# The work page of each kind of item: one URL (`work/<id>/`, its criteria's saves and its submission)
# for every kind, drawn by the item's template. A kind missing here is refused (403) by
# `selectors.assignment_for_user`, never drawn as another kind's page.
PAGES = {Item.Kind.PAIR: "annotate/assignment.html", Item.Kind.READING: "annotate/reading.html", Item.Kind.GROUP: "annotate/reading.html"}
WORK_KINDS = selectors.WORK_KINDS
PAGE = PAGES[Item.Kind.PAIR]
# A criterion's save status, drawn on every work page and sent back alone after a save (htmx).
SAVE_STATUS = "annotate/save_status.html"


def work_url(assignment) -> str:
    """Where an assignment is worked on: the work page, for every kind of item."""
    return reverse("assignment", args=[assignment.pk])


def save_refused(request: HttpRequest, exc: ValidationError, *, flush: bool, assignment) -> HttpResponse:
    """A refused save's reply: the reasons as plain text to the page's flush (nobody reads its reply
    but the status), the status fragment of the item's page to htmx, else the whole page with them."""
    if flush:
        return HttpResponse(" ".join(exc.messages), status=422, content_type="text/plain; charset=utf-8")
    if request.htmx:
        return render(request, SAVE_STATUS, {"save_errors": exc.messages}, status=422)
    return _page(request, assignment, status=422, errors=exc.messages)


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_staff:
        return redirect("campaign-list")
    queue = selectors.annotator_queue(user=request.user)
    for row in queue:
        row["left_pairs"], row["left_articles"] = claims.items_left(campaign=row["campaign"], user=request.user, active=row["active"])
        row["left"] = row["left_pairs"] + row["left_articles"]
        row["active_url"] = work_url(row["active"]) if row["active"] else ""
    from annotate.adjudication_selectors import adjudicating

    return render(request, "annotate/home.html", {"queue": queue, "adjudicating": adjudicating(user=request.user)})


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


@require_GET
@staff_required
def topic_removed(request: HttpRequest, topic_id: int, system_key: str) -> HttpResponse:
    """One article's raw markdown with what the cleaner removed marked, recomputed from the stored texts."""
    topic = get_object_or_404(Topic, pk=topic_id)
    row = selectors.topic_article_removal(topic=topic, system_key=system_key)
    if row is None:
        raise Http404("No article of this system for this topic.")
    context = {
        "topic": topic,
        "article": row.article,
        "removal": row.removal,
        "segments": removed_segments(row.article.raw_markdown, row.removal.spans),
    }
    return render(request, "annotate/topic_removed.html", context)


# --- annotators' work -----------------------------------------------------------


@require_POST
@login_required
def claim_next(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if campaign.labels_only:
        raise PermissionDenied(claims.LABELS_ONLY)
    assignment = claims.assignment_claim_next(campaign=campaign, user=request.user)
    if assignment is None and not campaign.is_open:
        # Only members get here: the claim refuses everybody else with 403 first.
        return render(request, "annotate/campaign_closed.html", {"campaign": campaign, "reason": claims.CAMPAIGN_CLOSED}, status=409)
    if assignment is None:
        messages.info(request, f"Nothing left to annotate in {campaign.shown_name}. Thank you!")
        return redirect("home")
    return redirect(work_url(assignment))


def _page(request, assignment, *, status=200, errors=None, show_gaps=False, refused_submit=False):
    """The whole work page of the assignment's item; after a refused submission (`show_gaps`) it lists
    what is missing, by criterion text."""
    if assignment.pair.kind != Item.Kind.PAIR:
        context = reading_selectors.reading_page(assignment=assignment)
    else:
        context = selectors.annotation_page(assignment=assignment)
        shown = selectors.shown_articles(assignment.pair, assignment.a_first)
        alignment = alignments.section_alignment_ensure(first=shown["1"], second=shown["2"])
        maps = alignment_selectors.section_maps(shown=shown, alignment=alignment)
        for column in context["columns"]:
            column["sections"] = maps[column["position"]]
    context.update(errors=errors or [], show_gaps=show_gaps, refused_submit=refused_submit)
    return render(request, PAGES[assignment.pair.kind], context, status=status)


@require_GET
@login_required
def assignment_page(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, kinds=WORK_KINDS)
    claims.assignment_open(assignment=assignment)
    return _page(request, assignment)


@require_POST
@login_required
def label_save(request: HttpRequest, assignment_id: int, criterion_key: str) -> HttpResponse:
    """Saves one criterion, for three callers: htmx (a status fragment), a form posted without
    JavaScript (back to the criterion), and the page's flush when it is hidden or left (`flush=1`
    in the body: `navigator.sendBeacon` or `fetch(..., {keepalive: true})`, which send no htmx
    headers and whose reply nobody may read: 204, or a 4xx with the reason as plain text).
    All three carry the CSRF token in the body or a header and pass the same CSRF checks.
    A pair's criterion takes its winner as `position`, one article's its answer as `value`."""
    flush = request.POST.get("flush") == "1"
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, with_articles=False, kinds=WORK_KINDS)
    campaign = assignment.pair.campaign
    criterion = get_object_or_404(Criterion, criterion_set_id=campaign.criterion_set_id, key=criterion_key)
    reading = assignment.pair.kind != Item.Kind.PAIR
    given = {"value": request.POST.get("value")} if reading else {"position": request.POST.get("position")}
    if "acceptable_given" in request.POST:
        # Where the form holds the boxes of also-acceptable verdicts (none ticked sends none).
        given["acceptable"] = request.POST.getlist("acceptable")
    try:
        saved = answers.answer_save(
            assignment=assignment, criterion=criterion, user=request.user, rationale=request.POST.get("rationale"), **given
        ).label
    except ValidationError as exc:
        return save_refused(request, exc, flush=flush, assignment=assignment)
    if flush:
        return HttpResponse(status=204)
    if request.htmx:
        if reading:
            done, total = reading_selectors.reading_progress(assignment=assignment)
            state = reading_selectors.criterion_row(criterion, saved if saved.pk else None, Rules.of(campaign), assignment.order).state
        else:
            done, total = selectors.assignment_progress(assignment=assignment)
            state = selectors.label_state(campaign=campaign, label=saved)
        context = {"saved_at": saved.saved_at if saved.pk else None, "state": state, "done": done, "total": total, "oob": True}
        return render(request, SAVE_STATUS, context)
    return redirect(reverse("assignment", args=[assignment.pk]) + f"#c-{criterion.key}")


@require_POST
@login_required
def overall_save(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, with_articles=False)
    try:
        answers.overall_save(assignment=assignment, user=request.user, value=request.POST.get("overall", ""))
    except ValidationError as exc:
        if request.htmx:
            return render(request, SAVE_STATUS, {"save_errors": exc.messages}, status=422)
        return _page(request, assignment, status=422, errors=exc.messages)
    if request.htmx:
        state = "complete" if assignment.overall else ""
        return render(request, SAVE_STATUS, {"saved_at": assignment.last_activity_at, "state": state})
    return redirect(reverse("assignment", args=[assignment.pk]) + "#overall")


@require_POST
@login_required
def submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, kinds=WORK_KINDS)
    try:
        labelling.assignment_submit(assignment=assignment, user=request.user)
    except labelling.Incomplete:
        return _page(request, assignment, status=422, show_gaps=True)
    except ValidationError as exc:
        return _page(request, assignment, status=422, errors=exc.messages, refused_submit=True)
    messages.success(request, f"Submitted: {assignment.pair.topic.title}.")
    if assignment.pair.kind == Item.Kind.PAIR and assignment.pair.campaign.guess_question:
        # Asked after the labels are in; the guess page's "Next pair" makes the next claim.
        return redirect("assignment-guess", assignment.pk)
    following = claims.assignment_claim_next(campaign=assignment.pair.campaign, user=request.user)
    if following is None:
        messages.info(request, "No more work is waiting in this campaign.")
        return redirect("home")
    return redirect(work_url(following))


@require_http_methods(["GET", "POST"])
@login_required
def assignment_guess(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The guess question for a submitted pair: which article the annotator thinks is the reference.
    Never required: the page's "Next pair" claims the next item whether it was answered or not."""
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, with_articles=False)
    campaign = assignment.pair.campaign
    if not campaign.guess_question:
        raise Http404(guesses.NOT_ASKED)
    status, errors = 200, []
    if request.method == "POST":
        try:
            guesses.assignment_guess_save(assignment=assignment, user=request.user, answer=request.POST.get("guess", ""))
        except ValidationError as exc:
            status, errors = (409 if guesses.LOCKED in exc.messages else 400), exc.messages
        else:
            return redirect("assignment-guess", assignment.pk)
    context = {
        "assignment": assignment,
        "campaign": campaign,
        "answer": guesses.guess_position(assignment.guess, assignment.a_first),
        "locked": guesses.guess_locked(assignment),
        "errors": errors,
    }
    return render(request, "annotate/guess.html", context, status=status)


@require_POST
@login_required
def pair_flag(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The annotator's "Flag this pair": htmx gets the flag box back; without JavaScript, the page."""
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user)
    errors, status = [], 200
    try:
        flags.pair_flag(assignment=assignment, user=request.user, reason=request.POST.get("reason", ""), note=request.POST.get("note", ""))
    except ValidationError as exc:
        errors, status = exc.messages, 422
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user)
    if request.htmx:
        context = {**selectors.annotation_page(assignment=assignment), "flag_errors": errors, "flag_open": True}
        return render(request, PAGE + "#flag", context, status=status)
    if errors:
        return _page(request, assignment, status=422, errors=errors)
    messages.success(request, "Thank you: the pair is flagged for staff.")
    return redirect("assignment", assignment.pk)


@require_POST
@staff_required
def pair_void(request: HttpRequest, campaign_id: int, pair_id: int) -> HttpResponse:
    """Staff void a pair for everyone from the campaign page's flags."""
    pair = get_object_or_404(Pair.objects.select_related("topic"), pk=pair_id, campaign_id=campaign_id)
    try:
        voided = flags.pair_void(pair=pair, by=request.user, reason=request.POST.get("reason", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            f"Voided the pair on {pair.topic.title}: {voided} assignment{'s' if voided != 1 else ''} voided; the labels stay in the audit trail.",
        )
    return redirect(reverse("campaign-detail", args=[campaign_id]) + "#flags")


@require_POST
@login_required
def span_add(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        labelling.span_add(
            assignment=assignment,
            position=request.POST.get("position", ""),
            start=int(request.POST.get("start", "-1")),
            end=int(request.POST.get("end", "-1")),
            quote=request.POST.get("quote", ""),
            polarity=int(request.POST.get("polarity", "0")),
            comment=request.POST.get("comment", ""),
            criterion=request.POST.get("criterion", ""),
            step=int(step) if (step := request.POST.get("step", "")) else None,
        )
    except (ValueError, ValidationError) as exc:
        errors = exc.messages if isinstance(exc, ValidationError) else ["Offsets, polarity and the step must be whole numbers."]
        return render(request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "span_errors": errors}, status=422)
    return render(request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "evidence_oob": True})


@require_POST
@login_required
def span_delete(request: HttpRequest, assignment_id: int, span_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user)
    try:
        labelling.span_delete(assignment=assignment, span_id=span_id)
    except ValidationError as exc:
        return render(
            request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "span_errors": exc.messages}, status=422
        )
    if not request.htmx:
        return redirect(reverse("assignment", args=[assignment.pk]) + "#spans")
    return render(request, PAGE + "#spans", {**selectors.annotation_page(assignment=assignment), "evidence_oob": True})


# --- researchers' campaigns -------------------------------------------------------


@require_GET
@staff_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/campaign_list.html", {"campaigns": selectors.campaign_list()})


@require_http_methods(["GET", "POST"])
@staff_required
def campaign_new(request: HttpRequest) -> HttpResponse:
    from annotate.forms import CampaignForm

    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = campaigns.campaign_create(**form.service_arguments())
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            readings = campaign.readings.count()
            note = f" and {readings} one-article readings" if readings else ""
            messages.success(request, f"Campaign '{campaign.name}' created with {campaign.pairs.count()} pairs{note}.")
            warning = selectors.campaign_design(campaign=campaign).warning(forbid_repeats=campaign.forbid_repeats)
            if warning:
                messages.warning(request, warning)
            return redirect("campaign-detail", campaign.pk)
    return render(request, "annotate/campaign_new.html", {"form": form}, status=422 if form.errors else 200)


@require_GET
@staff_required
def campaign_detail(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Totals, then a page of pairs and a page of annotators (`?pairs=N`, `?annotators=N`); an htmx
    request from a pager gets that table alone."""
    from annotate.blindness_selectors import campaign_launch_warning

    campaign = get_object_or_404(Campaign.objects.select_related("criterion_set"), pk=campaign_id)
    progress = selectors.campaign_progress_page(
        campaign=campaign, pairs_page=request.GET.get("pairs", 1), annotators_page=request.GET.get("annotators", 1)
    )
    context = {"campaign": campaign, "query": request.GET, **progress, "flagged": flag_selectors.campaign_flags(campaign=campaign)}
    template = "annotate/campaign_detail.html"
    if request.htmx and not request.htmx.history_restore_request and request.htmx.target in ("pairs", "annotators"):
        return render(request, f"{template}#{request.htmx.target}", context)
    # The design cannot change once imported work is all a campaign holds.
    if not campaign.labels_only:
        context["readings"] = reading_selectors.readings_progress(campaign=campaign)
        context["design_warning"] = selectors.campaign_design(campaign=campaign).warning(forbid_repeats=campaign.forbid_repeats)
        # Anybody in the progress table has claimed a pair: the campaign has started.
        context["blindness_warning"] = campaign_launch_warning(campaign=campaign, launched=progress["annotators"].paginator.count > 0)
    return render(request, template, context)


@require_POST
@staff_required
def campaign_toggle(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    campaigns.campaign_set_open(campaign=campaign, is_open=request.POST.get("open") == "1")
    return redirect("campaign-detail", campaign.pk)


REFUSED_PAGE = "annotate/campaign_refused.html"


@require_POST
@staff_required
def campaign_emphasis(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Neutral emphasis on or off, before any pair is claimed (the settings page's rule, audited there too)."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    value = request.POST.get("neutral_emphasis")
    if value not in ("0", "1"):
        message = "Say neutral_emphasis=1 (bold and italic as plain text) or 0 (as written)."
        return render(request, REFUSED_PAGE, {"campaign": campaign, "message": message}, status=400)
    return _settings_changed(request, campaign, {"neutral_emphasis": value == "1"})


@require_POST
@staff_required
def campaign_epsilon(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The alt-test's epsilon and its reason (blank epsilon: cleared, and the report gives no verdict)."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        epsilon = alt_epsilon.parse_epsilon(request.POST.get("epsilon"))
    except ValueError as exc:
        return render(request, REFUSED_PAGE, {"campaign": campaign, "message": f"{exc}."}, status=400)
    return _settings_changed(request, campaign, {"alt_epsilon": epsilon, "alt_epsilon_reason": request.POST.get("reason") or ""})


def _settings_changed(request: HttpRequest, campaign: Campaign, values: dict) -> HttpResponse:
    try:
        campaign_settings.campaign_settings_change(campaign=campaign, values=values, by=request.user)
    except ValidationError as exc:
        status = 409 if isinstance(exc, campaign_settings.SettingsConflict) else 400
        return render(request, REFUSED_PAGE, {"campaign": campaign, "message": " ".join(exc.messages)}, status=status)
    return redirect("campaign-detail", campaign.pk)


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    reason = str(exception or "")
    if request.htmx and reason:
        # The page script shows a refused save's reason as it comes: the sentence alone, not a page.
        return HttpResponse(reason, status=403, content_type="text/plain; charset=utf-8")
    return render(request, "403.html", {"reason": reason}, status=403)


# --- accounts and campaign members -------------------------------------------------

ACCOUNTS_PAGE = "annotate/accounts_new.html"
MEMBERS_PAGE = "annotate/campaign_members.html"


class SetPasswordView(PasswordResetConfirmView):
    """Where set-password links land: Django's view, which also logs the owner in and clears their lockout.

    Logging in here goes round the login throttle on purpose: the link proves who
    they are, and somebody guessing at their name from their address must not
    keep them out (README "Security").
    """

    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"

    def form_valid(self, form):
        from annotate.accounts import account_lockout_clear

        response = super().form_valid(form)
        account_lockout_clear(user=form.user)
        return response


def _site_address(request: HttpRequest) -> str:
    """Where set-password links point: PUBLIC_BASE_URL when set (behind a proxy the request may show another host), else this request's."""
    from django.conf import settings

    # get_host() checks ALLOWED_HOSTS, so a forged Host header cannot redirect the links.
    return settings.PUBLIC_BASE_URL or f"{request.scheme}://{request.get_host()}"


@require_http_methods(["GET", "POST"])
@staff_required
def accounts_new(request: HttpRequest) -> HttpResponse:
    """Creates accounts and shows their set-password links, once: they are stored nowhere."""
    from annotate.accounts import accounts_create, entries_from_text, link_lifetime
    from annotate.forms import AccountsForm

    form = AccountsForm(request.POST if request.method == "POST" else None)
    context = {"form": form, "lifetime": link_lifetime(), "errors": []}
    status = 200
    if request.method == "POST":
        if not form.is_valid():
            context["errors"] = [f"{form[name].label}: {error}" for name, errors in form.errors.items() for error in errors]
            status = 422
        else:
            try:
                context["accounts"] = accounts_create(
                    entries=entries_from_text(form.cleaned_data["entries"]),
                    campaign=form.cleaned_data["campaign"],
                    reissue=form.cleaned_data["reissue"],
                    base_url=_site_address(request),
                    by=request.user,
                )
            except ValidationError as exc:
                context["errors"] = exc.messages
                status = 422
            else:
                context["campaign"] = form.cleaned_data["campaign"]
                context["form"] = AccountsForm()
    template = ACCOUNTS_PAGE + "#result" if request.htmx and request.method == "POST" else ACCOUNTS_PAGE
    response = render(request, template, context, status=status)
    # The links open accounts: keep them out of every cache.
    response["Cache-Control"] = "no-store"
    return response


def _members_changed(request: HttpRequest, campaign: Campaign, note: str) -> HttpResponse:
    """After a change: the list again with the note for htmx, else back to the page (post/redirect/get)."""
    if request.htmx:
        return _members(request, campaign, note=note)
    messages.success(request, note)
    return redirect("campaign-members", campaign.pk)


def _members(request: HttpRequest, campaign: Campaign, *, status: int = 200, **extra) -> HttpResponse:
    """The member list: the fragment for htmx (inline on the campaign page), else the whole page."""
    from annotate.forms import MembersAddForm

    members = selectors.campaign_members(campaign=campaign)
    context = {
        "campaign": campaign,
        "members": members,
        "has_list": any(member.is_listed for member in members),
        "form": MembersAddForm(),
        **extra,
    }
    return render(request, MEMBERS_PAGE + "#members" if request.htmx else MEMBERS_PAGE, context, status=status)


@require_GET
@staff_required
def campaign_members(request: HttpRequest, campaign_id: int) -> HttpResponse:
    return _members(request, get_object_or_404(Campaign, pk=campaign_id))


@require_POST
@staff_required
def campaign_members_add(request: HttpRequest, campaign_id: int) -> HttpResponse:
    from annotate.forms import MembersAddForm

    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = MembersAddForm(request.POST)
    errors: list[str] = []
    if not form.is_valid():
        errors = [str(error) for error in form.errors["usernames"]]
    else:
        try:
            admitted = campaigns.campaign_annotators_add(campaign=campaign, users=form.cleaned_data["usernames"], by=request.user)
        except ValidationError as exc:
            errors = exc.messages
    if errors:
        return _members(request, campaign, status=422, errors=errors, form=form)
    if admitted:
        note = f"Added to {campaign.name}: {', '.join(user.username for user in admitted)}."
    else:
        note = "Nothing changed: they could already annotate this campaign."
    return _members_changed(request, campaign, note)


@require_POST
@staff_required
def campaign_member_remove(request: HttpRequest, campaign_id: int, user_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    member = get_object_or_404(User, pk=user_id)
    if request.POST.get("confirm") != "yes":
        # Without JavaScript the Remove button lands here: ask before cutting somebody off.
        row = next((m for m in selectors.campaign_members(campaign=campaign) if m.pk == member.pk), None)
        return render(request, "annotate/campaign_member_remove.html", {"campaign": campaign, "member": member, "row": row})
    revoked = campaigns.campaign_annotator_remove(campaign=campaign, user=member, by=request.user)
    note = f"Removed {member.username} from {campaign.name}"
    note += f"; {revoked} pair(s) in progress are closed to them." if revoked else "."
    return _members_changed(request, campaign, note)


# --- blindness audit ---------------------------------------------------------------


@require_GET
@staff_required
def campaign_blindness(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Before launch: could an annotator tell the reference from a generated article by its looks?"""
    from annotate.blindness import MIN_TOPICS
    from annotate.blindness_adjudication import adjudicator_exposure
    from annotate.blindness_format import effect_rows, emphasis_lines, feature_rows
    from annotate.blindness_selectors import campaign_blindness as blindness

    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if campaign.labels_only:
        message = "This campaign holds imported labels only: its articles have no texts, so there are no looks to audit."
        return render(request, "annotate/labels_only.html", {"campaign": campaign, "message": message}, status=409)
    report = blindness(campaign=campaign)
    context = {
        "campaign": campaign,
        "report": report,
        "rows": feature_rows(report),
        "effects": effect_rows(report),
        "emphasis": emphasis_lines(report),
        "min_topics": MIN_TOPICS,
        "adjudicator_view": adjudicator_exposure(campaign=campaign),
    }
    return render(request, "annotate/campaign_blindness.html", context)
