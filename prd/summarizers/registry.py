"""The summariser chosen by settings (SAM_SUMMARIZER_PROVIDER), with the extractive fallback."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from django.conf import settings
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
    summarizer = get_summarizer()
    extractive = ExtractiveSummarizer()
    if not isinstance(summarizer, ExtractiveSummarizer):
        try:
            return Summary(text=summarizer.summarise(digest, max_chars=max_chars), source=summarizer.name)
        except SummarizerError as exc:
            logger.warning("summariser %s failed, using the extractive summary: %s", summarizer.name, exc)
            return Summary(text=extractive.summarise(digest, max_chars=max_chars), source=extractive.name,
                           fallback_reason=str(exc))
    return Summary(text=extractive.summarise(digest, max_chars=max_chars), source=extractive.name)
