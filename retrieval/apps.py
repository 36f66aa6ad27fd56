from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Recall"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from governance import retention
        from governance.audit import selectors as audit_selectors
        from memories import hooks
        from retrieval import freshness, training
        from retrieval.models import RecallEvent
        from retrieval.receivers import drop_cached_recalls
        from retrieval.retention import SPACE_DATA
        from samsite.core.signals import spaces_changed

        spaces_changed.connect(drop_cached_recalls, dispatch_uid="retrieval.drop_cached_recalls")
        # Governance reaches recall's data without naming it (docs/architecture.md).
        retention.register_space_data(SPACE_DATA)
        audit_selectors.register_recall_events(RecallEvent)
        # An edited memory's training examples run as soon as the edit is settled.
        hooks.on_settled(training.after_edit)
        # Word statistics are recounted soon after memories are written.
        hooks.on_settled(freshness.after_write)
