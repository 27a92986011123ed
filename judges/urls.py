from django.urls import path

from judges import views

urlpatterns = [
    path("", views.judge_list, name="judge-list"),
    path("campaign/<int:campaign_id>/", views.campaign_runs, name="judge-campaign"),
    path("campaign/<int:campaign_id>/start/", views.run_start, name="judge-run-start"),
    path("runs/<int:run_id>/stop/", views.run_stop, name="judge-run-stop"),
]
