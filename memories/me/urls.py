"""The My memory page's routes, under /me/ (the REST API's /api/v1/me/… are apart)."""

from django.urls import path

from memories.me import views

urlpatterns = [
    path("", views.home, name="me-home"),
    path("memories/<str:memory_id>/edit/", views.memory_edit, name="me-memory-edit"),
    path("memories/<str:memory_id>/delete/", views.memory_delete, name="me-memory-delete"),
    path("modes/", views.modes, name="me-modes"),
    path("modes/mine/", views.my_mode_set, name="me-mode-mine"),
    path("modes/spaces/<str:slug>/", views.space_mode_set, name="me-mode-space"),
    path("export/", views.export, name="me-export"),
    path("export/download/", views.export_download, name="me-export-download"),
    path("forget/", views.forget, name="me-forget"),
    path("imports/", views.imports, name="me-imports"),
    path("imports/<str:import_id>/", views.import_detail, name="me-import"),
]
