from django.urls import path

from calibration import views

urlpatterns = [
    path("campaign/<int:campaign_id>/", views.dashboard, name="calibration-dashboard"),
    path("campaign/<int:campaign_id>/report.<str:fmt>", views.download, name="calibration-download"),
]
