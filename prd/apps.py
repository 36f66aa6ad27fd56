from django.apps import AppConfig


class PrdConfig(AppConfig):
    name = "prd"
    verbose_name = "PRD executions"
    default_auto_field = "django.db.models.BigAutoField"
