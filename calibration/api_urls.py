"""Calibration's routes under /api/: config/urls.py serves them in the `api` namespace, beside annotate's."""

from django.urls import path

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from calibration import api

urlpatterns = [
    path(
        "campaigns/<id:campaign_id>/labels/",
        api.campaign_labels,
        name="campaign-labels",
    ),
    path("campaigns/<id:campaign_id>/plan/", api.campaign_plan, name="campaign-plan"),
]
