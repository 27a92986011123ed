from django.core.management.base import CommandError

from annotate.models import Campaign


def campaign_named(name: str) -> Campaign:
    """The campaign a command's --campaign names, or a clear error."""
    campaign = Campaign.objects.filter(name=name).first()
    if campaign is None:
        raise CommandError(f"No campaign named '{name}'. Create it first with create_campaign.")
    return campaign
