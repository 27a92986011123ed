from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.accounts import accounts_create, entries_from_text, link_lifetime
from annotate.models import Campaign
from common.lookups import named


class Command(BaseCommand):
    help = (
        "Create annotator accounts and print a one-time set-password link for each: "
        "username, e-mail and link, tab-separated, one line per account. "
        "An entry is a username, an e-mail address (the username is then its local part) or username,email. "
        "All or nothing: if any entry is bad, every problem is listed, nothing is created, and the exit status is 2. "
        "Existing accounts are not changed; they get a new link only with --reissue. "
        "A link works once and expires after PASSWORD_RESET_TIMEOUT (Django's default: 3 days)."
    )

    def add_arguments(self, parser):
        parser.add_argument("entries", nargs="*", help="username, e-mail, or username,email")
        parser.add_argument("--file", type=Path, help="more entries, one per line; blank lines and # comments are ignored")
        parser.add_argument("--campaign", help="add every account to this campaign (by name)")
        parser.add_argument(
            "--base-url", default="", help="the site's address for the links, e.g. https://annotate.lab.example (default: PUBLIC_BASE_URL)"
        )
        parser.add_argument("--reissue", action="store_true", help="also print new links for accounts that already exist")

    def handle(self, *args, **options):
        if settings.SECRET_KEY_SOURCE == "none":
            # Links are signed with the key: without the served site's own, they would never work there.
            raise CommandError(
                "SECRET_KEY is not set: create_accounts signs set-password links with it, and a link works only on a site "
                "served with the same key. Set SECRET_KEY to the served site's key (make demo's is read from .demo-secret-key)."
            )
        entries = list(options["entries"])
        if options["file"]:
            try:
                entries += entries_from_text(options["file"].read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{options['file']}: cannot be read ({exc})") from exc
        if not entries:
            raise CommandError("Give usernames or e-mail addresses, or --file with one per line.")
        campaign = None
        if options["campaign"]:
            campaign = named(Campaign.objects, options["campaign"])
        try:
            accounts = accounts_create(
                entries=entries,
                campaign=campaign,
                reissue=options["reissue"],
                base_url=options["base_url"] or settings.PUBLIC_BASE_URL,
            )
        except ValidationError as exc:
            for message in exc.messages:
                self.stderr.write(message)
            raise CommandError(f"{len(exc.messages)} problem(s); no account was created or changed.", returncode=2) from exc
        for account in accounts:
            link = account.link or "(existing account: no new link; use --reissue for one)"
            self.stdout.write(f"{account.user.username}\t{account.user.email}\t{link}")
        created = sum(account.created for account in accounts)
        note = f"{created} account(s) created, {len(accounts) - created} existing"
        if campaign is not None:
            note += f", all on campaign '{campaign.name}'"
        if any(account.link for account in accounts):
            note += f". Each link works once, within {link_lifetime()}"
        self.stderr.write(note + ".")
