"""A memory's editable state as plain data: normalise, fill suggestions, validate, diff.

Services work on an "entry state": a dict keyed by the API's field names (the SAM entry
shape, README.md "The memory entry"). These functions are pure, so normalisation and validation rules can
be tested without a database.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from django.conf import settings

from memories import enrichment, limits
from memories.models import (
    BUILTIN_KINDS,
    DecayType,
    MemoryType,
    Priority,
    Reliability,
    SourceType,
    default_context_window,
    default_decay_policy,
)
from memories.normalize import clean_content, clean_line, clean_phrases, clean_strings, clean_tags

# The fields an edit may change; each change is a new version.
VERSIONED_FIELDS: tuple[str, ...] = (
    "title", "content", "summary", "canonical_phrases", "tags", "memory_type", "kind",
    "priority", "reliability", "importance", "confidence_score", "source", "occurred_at",
    "context_window", "decay_policy", "metadata", "training_examples", "superseded_by",
)

DEFAULTS: dict[str, Any] = {
    "memory_type": MemoryType.SEMANTIC.value,
    "kind": "fact",
    "priority": Priority.NORMAL.value,
    "reliability": Reliability.UNVERIFIED.value,
    "importance": 0.5,
    "confidence_score": 0.75,
    "source": {"type": SourceType.USER.value, "ref": "api", "uri": None},
    "occurred_at": None,
    "metadata": {},
    "training_examples": [],
    "superseded_by": None,
}

Errors = dict[str, list[str]]


def known_kinds() -> tuple[str, ...]:
    return BUILTIN_KINDS + tuple(settings.SAM_EXTRA_KINDS)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def embedding_text(state: dict[str, Any]) -> str:
    """What gets embedded. Title and phrases first: the model reads only 256 tokens."""
    phrases = "; ".join(state["canonical_phrases"])
    return f"{state['title']}\n{phrases}\n{state['content']}"


def _normalise_training_examples(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cleaned = []
    for index, example in enumerate(examples, start=1):
        cleaned.append({
            "id": clean_line(str(example.get("id") or f"tr_{index:02d}")),
            "user": clean_line(str(example.get("user", ""))),
            "assistant": clean_line(str(example.get("assistant", ""))),
            "assertions": clean_strings(str(a) for a in example.get("assertions", [])),
            "last_tested_at": example.get("last_tested_at"),
            "pass_rate": float(example.get("pass_rate", 0.0)),
        })
    return cleaned


def normalise(changes: dict[str, Any]) -> dict[str, Any]:
    """Normalise the fields present in `changes` (README.md, "The memory entry"); others are left out."""
    out = dict(changes)
    if "title" in out:
        out["title"] = clean_line(out["title"])
    if "content" in out:
        out["content"] = clean_content(out["content"])
    if "summary" in out:
        out["summary"] = clean_line(out["summary"] or "")
    if "canonical_phrases" in out:
        out["canonical_phrases"] = clean_phrases(out["canonical_phrases"] or [])
    if "tags" in out:
        out["tags"] = clean_tags(out["tags"] or [])
    if "kind" in out:
        out["kind"] = clean_line(out["kind"]).lower()
    if "source" in out:
        source = {**DEFAULTS["source"], **(out["source"] or {})}
        source["ref"] = clean_line(source.get("ref") or "")
        source["uri"] = clean_line(source["uri"]) or None if source.get("uri") else None
        out["source"] = source
    if "context_window" in out:
        window = {**default_context_window(), **(out["context_window"] or {})}
        out["context_window"] = {
            "applies_to": clean_phrases(window["applies_to"]),
            "excludes": clean_phrases(window["excludes"]),
        }
    if "decay_policy" in out:
        out["decay_policy"] = {**default_decay_policy(), **(out["decay_policy"] or {})}
    if "training_examples" in out:
        out["training_examples"] = _normalise_training_examples(out["training_examples"] or [])
    if "metadata" in out and out["metadata"] is None:
        out["metadata"] = {}
    return out


def wants_tag_suggestions(state: dict[str, Any], *, explicit: set[str]) -> bool:
    """Whether `fill_suggestions` suggests tags for `state`: none given, and a content."""
    return "tags" not in explicit and not state.get("tags") and bool(state.get("content"))


def fill_suggestions(state: dict[str, Any], *, explicit: set[str],
                     known_tags: Callable[[list[str]], Collection[str]] | None = None) -> list[str]:
    """Suggest summary, phrases and tags where missing. Returns the names filled in.

    Summary and phrases are required, so an empty value is replaced too; an explicit
    empty tag list is a choice and is kept. Tags are suggested only among `known_tags`
    (the space's existing tags, memories.services): without it, none.
    """
    filled = []
    if not state.get("summary") and state.get("content"):
        state["summary"] = enrichment.suggest_summary(state["content"], title=state["title"])
        filled.append("summary")
    if not state.get("canonical_phrases") and state.get("title"):
        state["canonical_phrases"] = enrichment.suggest_phrases(
            title=state["title"], content=state.get("content", "")
        )
        filled.append("canonical_phrases")
    if wants_tag_suggestions(state, explicit=explicit) and known_tags is not None:
        state["tags"] = enrichment.suggest_tags(
            title=state.get("title", ""), content=state["content"], known=known_tags
        )
        if state["tags"]:
            filled.append("tags")
    return filled


def _length(errors: Errors, path: str, value: str, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if len(value) < low:
        errors.setdefault(path, []).append(f"Must be at least {low} characters.")
    elif len(value) > high:
        errors.setdefault(path, []).append(f"Must be at most {high} characters.")


def _count(errors: Errors, path: str, items: list, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if len(items) < low:
        errors.setdefault(path, []).append(f"Needs at least {low} item(s).")
    elif len(items) > high:
        errors.setdefault(path, []).append(f"Allows at most {high} items.")


def _unit_interval(errors: Errors, path: str, value: Any) -> None:
    if not isinstance(value, (int, float)) or not 0 <= value <= 1:
        errors.setdefault(path, []).append("Must be a number between 0 and 1.")


def validate(state: dict[str, Any]) -> Errors:
    """Field-level errors against the entry's limits (README.md, "Limits"); empty when valid."""
    errors: Errors = {}
    _length(errors, "title", state.get("title", ""), limits.TITLE)
    _length(errors, "content", state.get("content", ""), limits.CONTENT)
    _length(errors, "summary", state.get("summary", ""), limits.SUMMARY)
    phrases = state.get("canonical_phrases", [])
    _count(errors, "canonical_phrases", phrases, limits.PHRASES_COUNT)
    for index, phrase in enumerate(phrases):
        _length(errors, f"canonical_phrases[{index}]", phrase, limits.PHRASE)
    tags = state.get("tags", [])
    _count(errors, "tags", tags, limits.TAGS_COUNT)
    for index, tag in enumerate(tags):
        _length(errors, f"tags[{index}]", tag, limits.TAG)
    if state.get("memory_type") not in MemoryType.values:
        errors.setdefault("memory_type", []).append(f"Must be one of {MemoryType.values}.")
    if state.get("kind") not in known_kinds():
        errors.setdefault("kind", []).append(
            f"Unknown kind; known kinds: {', '.join(known_kinds())} (add more with SAM_EXTRA_KINDS)."
        )
    if state.get("priority") not in Priority.values:
        errors.setdefault("priority", []).append(f"Must be one of {Priority.values}.")
    if state.get("reliability") not in Reliability.values:
        errors.setdefault("reliability", []).append(f"Must be one of {Reliability.values}.")
    _unit_interval(errors, "importance", state.get("importance"))
    _unit_interval(errors, "confidence_score", state.get("confidence_score"))
    source = state.get("source", {})
    if source.get("type") not in SourceType.values:
        errors.setdefault("source.type", []).append(f"Must be one of {SourceType.values}.")
    _length(errors, "source.ref", source.get("ref") or "", limits.SOURCE_REF)
    if source.get("uri") and len(source["uri"]) > limits.SOURCE_URI_MAX:
        errors.setdefault("source.uri", []).append(
            f"Must be at most {limits.SOURCE_URI_MAX} characters."
        )
    window = state.get("context_window", {})
    for key in ("applies_to", "excludes"):
        if len(window.get(key, [])) > limits.CONTEXT_WINDOW_ITEMS_MAX:
            errors.setdefault(f"context_window.{key}", []).append(
                f"Allows at most {limits.CONTEXT_WINDOW_ITEMS_MAX} items."
            )
    decay = state.get("decay_policy", {})
    if decay.get("type") not in DecayType.values:
        errors.setdefault("decay_policy.type", []).append(f"Must be one of {DecayType.values}.")
    half_life = decay.get("half_life_days")
    low, high = limits.HALF_LIFE_DAYS
    if not isinstance(half_life, int) or isinstance(half_life, bool) or not low <= half_life <= high:
        errors.setdefault("decay_policy.half_life_days", []).append(
            f"Must be a whole number of days between {low} and {high}."
        )
    _unit_interval(errors, "decay_policy.min_confidence", decay.get("min_confidence"))
    examples = state.get("training_examples", [])
    if len(examples) > limits.TRAINING_EXAMPLES_MAX:
        errors.setdefault("training_examples", []).append(
            f"Allows at most {limits.TRAINING_EXAMPLES_MAX} items."
        )
    for index, example in enumerate(examples):
        path = f"training_examples[{index}]"
        _length(errors, f"{path}.id", example["id"], limits.TRAINING_ID)
        _length(errors, f"{path}.user", example["user"], limits.TRAINING_USER)
        _length(errors, f"{path}.assistant", example["assistant"], limits.TRAINING_ASSISTANT)
        if len(example["assertions"]) > limits.TRAINING_ASSERTIONS_MAX:
            errors.setdefault(f"{path}.assertions", []).append(
                f"Allows at most {limits.TRAINING_ASSERTIONS_MAX} items."
            )
        _unit_interval(errors, f"{path}.pass_rate", example["pass_rate"])
    return errors


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return copy.deepcopy(value)


def diff(before: dict[str, Any], after: dict[str, Any], *, reason: str) -> list[dict[str, Any]]:
    """The changelog diff [{path, before, after, reason}] over the versioned fields."""
    changes = []
    for field in VERSIONED_FIELDS:
        old, new = _jsonable(before.get(field)), _jsonable(after.get(field))
        if old != new:
            changes.append({"path": field, "before": old, "after": new, "reason": reason})
    return changes


def snapshot(state: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe copy of the versioned fields, as stored in MemoryVersion.snapshot."""
    return {field: _jsonable(state.get(field)) for field in VERSIONED_FIELDS}
