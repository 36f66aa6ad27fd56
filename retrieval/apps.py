from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Recall"
    default_auto_field = "django.db.models.BigAutoField"
