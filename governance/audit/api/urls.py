from django.urls import path, re_path

from governance.audit.api import views

urlpatterns = [
    re_path(r"^memories/(?P<id>[A-Za-z0-9_-]+)/timeline/$", views.MemoryTimelineView.as_view(),
            name="memory-timeline"),
    path("spaces/<slug:slug>/timeline/", views.SpaceTimelineView.as_view(), name="space-timeline"),
]
