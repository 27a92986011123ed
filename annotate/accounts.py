"""Accounts for a lab: creating annotators' logins and handing out set-password links.

A new account gets no password: its owner chooses one through a link made by
Django's password-reset machinery (`default_token_generator`, the user's id in
`urlsafe_base64_encode`, Django's PasswordResetConfirmView). The token hashes
the password and the last login, so a link works once: setting the password,
or logging in, voids it. Unused, it expires after
`settings.PASSWORD_RESET_TIMEOUT` seconds (Django's default: three days).
Nobody stores the links; they are shown once. Using a link logs its owner in
(`annotate.views.SetPasswordView`) and clears the failed logins recorded
against their name, so that a lockout somebody else caused
(`annotate.throttling`) never keeps them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotate.models import Campaign
from annotate.services.campaigns import campaign_annotators_add

USERNAME_MAX = User._meta.get_field("username").max_length
EMAIL_MAX = User._meta.get_field("email").max_length


@dataclass(frozen=True)
class IssuedAccount:
    user: User
    created: bool
    link: str  # "" for an existing account whose link was not re-issued


def entries_from_text(text: str) -> list[str]:
    """One entry per line; blank lines and lines starting with # are left out."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def link_lifetime() -> str:
    """How long a fresh link works, in words (rounded down)."""
    seconds = settings.PASSWORD_RESET_TIMEOUT
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'' if n == 1 else 's'}"
    return f"{seconds} seconds"


def account_set_password_link(*, user: User, base_url: str) -> str:
    """An absolute one-time link to Django's PasswordResetConfirmView for the user."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return base_url.rstrip("/") + reverse("password_reset_confirm", kwargs={"uidb64": uidb64, "token": token})


def account_lockout_clear(*, user: User) -> int:
    """Forgets the failed logins recorded against the user's name, from every address; returns how many rows went.

    Called when the user proves who they are with a set-password link: a lockout
    somebody else caused by guessing at their name then no longer keeps them out.
    """
    from axes.utils import reset

    return reset(username=user.get_username())


def _is_email(text: str) -> bool:
    try:
        validate_email(text)
    except ValidationError:
        return False
    return True


def _parse(text: str) -> tuple[str, str, list[str]]:
    """(username, e-mail, problems) for one entry; either name may be ""."""
    if "," in text:
        username, _, email = text.partition(",")
        username, email = username.strip(), email.strip()
        if "," in email:
            return "", "", ["write one account per line, as username,email"]
    elif "@" in text:
        # Usernames may hold '@' too, but a lone entry with one is meant as an address
        # (write `name@lab,` for such a username without an address).
        username, email = "", text
    else:
        username, email = text, ""
    problems = []
    if not username and not email:
        problems.append("give a username, an e-mail address, or both")
    if username:
        username = User.normalize_username(username)
        if len(username) > USERNAME_MAX:
            problems.append(f"a username has at most {USERNAME_MAX} characters")
        try:
            User.username_validator(username)
        except ValidationError as exc:
            problems += exc.messages
    if email:
        email = User.objects.normalize_email(email)
        if len(email) > EMAIL_MAX or not _is_email(email):
            problems.append(f"'{email}' is not a valid e-mail address")
    return username, email, problems


def _username_from_email(email: str, reserved: set[str]) -> str:
    """The address's local part, lower-cased, cut to what usernames allow, with a number added when taken."""
    base = re.sub(r"[^\w.+-]", "", email.rsplit("@", 1)[0].lower())[: USERNAME_MAX - 10] or "user"
    candidate, n = base, 1
    while candidate.lower() in reserved or User.objects.filter(username__iexact=candidate).exists():
        n += 1
        candidate = f"{base}{n}"
    return candidate


@dataclass
class _AccountEntry:
    text: str
    username: str
    email: str
    user: User | None = None  # an existing account
    fill_email: bool = False


def _plan(entries: list[str], problems: list[str]) -> list[_AccountEntry]:
    """Matches each entry to an existing account or a new one; appends what is wrong to `problems`."""
    plans: list[_AccountEntry] = []
    seen: dict[tuple[str, str], str] = {}
    for text in entries:
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        username, email, errors = _parse(text)
        if errors:
            problems += [f"{text}: {error}" for error in errors]
            continue
        key = (username.lower(), email.lower())
        if key in seen:
            continue  # the same entry twice
        seen[key] = text
        plan = _AccountEntry(text, username, email)
        if username:
            plan.user = User.objects.filter(username=username).first()
            if plan.user is None:
                other = User.objects.filter(username__iexact=username).first()
                if other is not None:
                    problems.append(f"{text}: an account '{other.username}' exists; usernames that differ only in case are refused")
                    continue
            elif email and plan.user.email and plan.user.email.lower() != email.lower():
                problems.append(f"{text}: the account '{username}' has another e-mail address ({plan.user.email})")
                continue
            elif email and not plan.user.email:
                plan.fill_email = True
        else:
            owners = list(User.objects.filter(email__iexact=email)[:2])
            if len(owners) > 1:
                problems.append(f"{text}: several accounts have this e-mail address; give the username instead")
                continue
            plan.user = owners[0] if owners else None
        if email and (plan.user is None or plan.fill_email):
            owner = User.objects.filter(email__iexact=email).exclude(pk=getattr(plan.user, "pk", None)).first()
            if owner is not None:
                problems.append(f"{text}: this e-mail address belongs to the account '{owner.username}'")
                continue
        if plan.user is not None and any(other.user == plan.user for other in plans):
            continue  # one account named twice
        plans.append(plan)

    # Two entries may not claim one new username or one address.
    by_name: dict[str, _AccountEntry] = {}
    by_email: dict[str, _AccountEntry] = {}
    for plan in plans:
        if plan.username and plan.user is None:
            first = by_name.setdefault(plan.username.lower(), plan)
            if first is not plan:
                problems.append(f"{plan.text}: the username '{plan.username}' is also asked for by '{first.text}'")
        if plan.email:
            first = by_email.setdefault(plan.email.lower(), plan)
            if first is not plan:
                problems.append(f"{plan.text}: the e-mail address '{plan.email}' is also given in '{first.text}'")
    # Usernames made from addresses come last, so that they never take a name asked for explicitly.
    reserved = set(by_name)
    for plan in plans:
        if plan.user is None and not plan.username:
            plan.username = _username_from_email(plan.email, reserved)
            reserved.add(plan.username.lower())
    return plans


def accounts_create(
    *,
    entries: list[str],
    campaign: Campaign | None = None,
    reissue: bool = False,
    base_url: str = "",
    by: User | None = None,
) -> list[IssuedAccount]:
    """Creates accounts with set-password links, and adds them to `campaign` when given.

    Each entry is a username, an e-mail address (any entry with '@' and no
    comma), or `username,email`. From an address alone the username is its
    local part, lower-cased, with a number added when taken (carol, carol2,
    ...); it never takes a username another entry asks for. An entry naming
    an existing account (by username, or by an address that one account has)
    does not create one: the account gets a new link only with `reissue`, is
    added to the campaign, and has its e-mail filled in if it had none. New
    accounts have an unusable password, so the link is the only way in.

    All or nothing: when any entry is bad, ValidationError lists one message
    per bad entry (the entry first) and nothing is written. `by` is the staff
    member asking (None from the command line); only a superuser may re-issue
    links for staff accounts, since a link lets whoever holds it into the account.
    Links are absolute, built on `base_url` (scheme and host); see the module
    docstring for how long they work.
    """
    base_url = base_url.strip().rstrip("/")
    problems: list[str] = []
    if base_url:
        # Not URLValidator: it refuses hosts without a dot, such as an intranet's `annotate`.
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment or " " in base_url:
            problems.append(f"The base address '{base_url}' is not an http(s) address such as https://annotate.example.org.")
    plans = _plan(entries, problems)
    if not plans and not problems:
        problems.append("No accounts given: write one username, e-mail address or username,email per line.")
    for plan in plans:
        if plan.user is None or not reissue:
            continue
        if not plan.user.is_active:
            problems.append(f"{plan.text}: the account is deactivated; reactivate it in the admin first")
        elif (plan.user.is_staff or plan.user.is_superuser) and by is not None and not by.is_superuser:
            problems.append(f"{plan.text}: only a superuser may issue a link for a staff account")
    if not base_url and any(plan.user is None or reissue for plan in plans):
        problems.append("Links need the site's address: give a base URL (--base-url) or set PUBLIC_BASE_URL.")
    if problems:
        raise ValidationError(problems)

    issued: list[IssuedAccount] = []
    try:
        with transaction.atomic():
            for plan in plans:
                created = plan.user is None
                if created:
                    # No password argument: the account gets an unusable one.
                    plan.user = User.objects.create_user(username=plan.username, email=plan.email)
                elif plan.fill_email:
                    plan.user.email = plan.email
                    plan.user.save(update_fields=["email"])
                link = account_set_password_link(user=plan.user, base_url=base_url) if created or reissue else ""
                issued.append(IssuedAccount(user=plan.user, created=created, link=link))
            if campaign is not None:
                campaign_annotators_add(campaign=campaign, users=[account.user for account in issued], by=by)
    except IntegrityError:
        raise ValidationError(["Somebody created one of these accounts at the same moment; nothing was written. Try again."]) from None
    return issued
