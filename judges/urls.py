from django.urls import path

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from judges import views

urlpatterns = [
    path("", views.judge_list, name="judge-list"),
    path("<id:judge_id>/test/", views.judge_test, name="judge-test"),
    path("campaign/<id:campaign_id>/", views.campaign_runs, name="judge-campaign"),
    path("campaign/<id:campaign_id>/start/", views.run_start, name="judge-run-start"),
    path("runs/<id:run_id>/stop/", views.run_stop, name="judge-run-stop"),
    path("runs/<id:run_id>/resume/", views.run_resume, name="judge-run-resume"),
]
