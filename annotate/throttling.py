"""Login throttling on two counts: per username and address, and per address across usernames.

django-axes counts failed logins per combination of its AXES_LOCKOUT_PARAMETERS, but compares
every combination with one limit. A password sprayer trying a few passwords each on many usernames
from one address never reaches the per-username limit, and one shared limit low enough to stop
it (5) would lock out a whole lab behind one NAT address after five typos. So the per-username
count stays axes' own (AXES_FAILURE_LIMIT), and this handler adds a second, higher limit on
every failure from the address whatever the username (AXES_IP_FAILURE_LIMIT). Both count
failures within AXES_COOLOFF_TIME of their last attempt, and a success clears only the
username's own failures from that address, never the address's count: logging in with one's
own account between guesses does not reset the sprayer's tally.

`request.login_address_locked` tells the lockout page which of the two locks applies.
"""

from __future__ import annotations

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


class AddressAwareAxesHandler(AxesDatabaseHandler):
    def address_failures(self, request) -> int:
        """Failed logins from the request's address, every username together, within the cool-off."""
        attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
        if settings.AXES_COOLOFF_TIME is not None:
            attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
        return attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0

    def get_failures(self, request, credentials: dict | None = None) -> int:
        failures = super().get_failures(request, credentials)
        if self.address_failures(request) >= settings.AXES_IP_FAILURE_LIMIT:
            request.login_address_locked = True
            # Axes compares one figure with AXES_FAILURE_LIMIT: report at least that many.
            return max(failures, get_failure_limit(request, credentials))
        return failures
