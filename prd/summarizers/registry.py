"""The summariser chosen by settings (SAM_SUMMARIZER_PROVIDER), with the extractive fallback."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from prd.summarizers.base import Digest, Summarizer, SummarizerError
from prd.summarizers.extractive import ExtractiveSummarizer

logger = logging.getLogger(__name__)


@functools.cache
def get_summarizer() -> Summarizer:
    config = settings.SAM_SUMMARIZER
    kind = config["PROVIDER"]
    if kind == "extractive":
        return ExtractiveSummarizer()
    if kind == "openai":
        from prd.summarizers.openai_chat import OpenAIChatSummarizer

        return OpenAIChatSummarizer(base_url=config["URL"], model=config["MODEL"],
                                    api_key=config["API_KEY"], timeout=config["TIMEOUT_SECONDS"])
    raise ImproperlyConfigured(f"Unknown SAM_SUMMARIZER_PROVIDER {kind!r} (extractive | openai).")


@receiver(setting_changed, dispatch_uid="prd.summarizers.reset")
def _reset_summarizer(*, setting: str, **kwargs) -> None:
    # Tests switch summarisers with override_settings; drop the cached one when they do.
    if setting == "SAM_SUMMARIZER":
        get_summarizer.cache_clear()


@dataclass(frozen=True)
class Summary:
    text: str
    source: str  # "extractive" or the model's name
    # Why the configured summariser was not used (it failed); None when it was.
    fallback_reason: str | None = None


def summarise(digest: Digest) -> Summary:
    """The configured summariser's narrative, or the extractive one when it fails.

    Never raises for a summariser failure: the caller stores what it gets and, when
    `fallback_reason` is set, schedules another try.
    """
    max_chars = int(settings.SAM_SUMMARIZER["MAX_CHARS"])
    extractive = ExtractiveSummarizer()
    try:
        summarizer = get_summarizer()
    except (ImproperlyConfigured, ValueError) as exc:
        # A bad SAM_SUMMARIZER_* must not fail every compaction (and keep the sweep
        # retrying it): store the extractive summary; the bounded retries pick up a
        # corrected configuration after a restart. The system check reports it at startup.
        logger.error("summariser misconfigured, using the extractive summary: %s", exc)
        return Summary(text=extractive.summarise(digest, max_chars=max_chars), source=extractive.name,
                       fallback_reason=f"misconfigured: {exc}")
    if not isinstance(summarizer, ExtractiveSummarizer):
        try:
            return Summary(text=summarizer.summarise(digest, max_chars=max_chars), source=summarizer.name)
        except SummarizerError as exc:
            logger.warning("summariser %s failed, using the extractive summary: %s", summarizer.name, exc)
            return Summary(text=extractive.summarise(digest, max_chars=max_chars), source=extractive.name,
                           fallback_reason=str(exc))
    return Summary(text=extractive.summarise(digest, max_chars=max_chars), source=extractive.name)


def check_summarizer(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """System check (registered in prd.apps): the configured summariser can be built.

    Compaction falls back to the extractive summary when it cannot, so a mistake here
    would otherwise only show as log lines; this reports it when SAM starts. A warning,
    not an error: SAM works without the model, and an error would stop the server.
    """
    config = settings.SAM_SUMMARIZER
    problems: list[checks.CheckMessage] = []
    try:
        get_summarizer()
    except (ImproperlyConfigured, ValueError) as exc:
        problems.append(checks.Warning(f"The summariser cannot be built: {exc}",
                              hint="Set SAM_SUMMARIZER_PROVIDER=extractive, or give openai its "
                                   "SAM_SUMMARIZER_URL and SAM_SUMMARIZER_MODEL.", id="prd.W001"))
    bounds = {"MAX_CHARS": lambda v: v >= 1, "MAX_ATTEMPTS": lambda v: v >= 1,
              "TIMEOUT_SECONDS": lambda v: v > 0, "RETRY_BASE_SECONDS": lambda v: v >= 0}
    for name, fits in bounds.items():
        value = config.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not fits(value):
            problems.append(checks.Warning(f"SAM_SUMMARIZER_{name} is out of range: {value!r}.",
                                           id="prd.W002"))
    return problems
