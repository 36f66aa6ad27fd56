"""redact_text: run every recognizer, drop what policy or context excludes, resolve overlaps,
replace what is left with placeholders."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import replace

from . import (
    addresses,
    assignments,
    checksum_ids,
    emails,
    entropy,
    id_tagger,
    identifiers,
    key_formats,
    labelled_ids,
    names,
    phones,
    spoken_numbers,
)
from .findings import PLACEHOLDERS, Candidate, Redacted
from .normalise import normalise
from .scan import Scan, Spans

Recognizer = Callable[[Scan], Iterator[Candidate]]

RECOGNIZERS: tuple[Recognizer, ...] = (
    key_formats.find,
    assignments.find,
    emails.find,
    identifiers.find,
    labelled_ids.find,
    checksum_ids.find,
    phones.find,
    spoken_numbers.find,
    addresses.find,
    names.find,
    entropy.find,
)
# Run after the others; a finding of theirs counts only where no other recognizer found anything,
# or over a phone read by its shape alone (id_tagger.phones_taken_over).
FALLBACKS: tuple[Recognizer, ...] = (id_tagger.find,)

# Kinds whose recognizers rely on context that code and URLs do not have: a capitalised word in
# backticks is an identifier, digits in a URL path are not a phone number. Emails, secrets and
# cue-based ids are still found there.
_SHIELDED_BY_CODE = frozenset({"name", "address"})
_SHIELDED_BY_URL = frozenset({"name", "address", "phone"})
_SHIELDED_RULES = frozenset({"mention"})  # by code and by URLs
# SAM's own ids (mem_…, evt_…, imp_…: a prefix and a ULID). Random Crockford base32 sometimes
# looks like a key ("…A3TN34VBFCR6CNPNBBZ1" has the shape of an AWS access key id), but an id
# SAM made is neither a secret nor personal data, and redacting it breaks the links it makes.
_SAM_ID = re.compile(r"(?<![\w-])[a-z]{2,8}_[0-9A-HJKMNP-TV-Z]{26}(?![\w-])")
# Candidates at or above this priority (emails, known key formats) are never swallowed by a longer,
# vaguer candidate that contains them.
_DEFINITE_PRIORITY = 90


def redact_text(
    text: str,
    *,
    allowlist: Collection[str] = (),
    public_figures: Collection[str] = (),
) -> Redacted:
    """Replace personal data and secrets in `text` with "[email]", "[phone]", "[address]", "[name]",
    "[id]" and "[secret]".

    allowlist: ids or usernames (compared case-insensitively, with or without a leading "@") that
    must survive, e.g. "@sam-bot", "acct_42". public_figures: names that must survive, e.g.
    "Linus Torvalds". Returns the redacted text and the findings, sorted by start, whose offsets
    index `text`. Deterministic and idempotent: placeholders are never detected again.

    Detection reads `text` NFKC-normalised, without zero-width characters and bidi controls
    (see normalise.py); the returned text is `text` itself with each finding's span replaced.
    """
    chosen = _detect(text, allowlist=allowlist, public_figures=public_figures)
    # Idempotence by construction: a replacement can change what its neighbours look like (a key
    # glued to the end of an email leaves "…@example.com" next to "[secret]"), so the output is
    # scanned again until nothing new is found. Each round replaces at least one character that is
    # not a placeholder, so the loop ends; text without findings costs no second scan.
    while chosen:
        output = _replace(text, chosen)
        more = _detect(output, allowlist=allowlist, public_figures=public_figures)
        if not more:
            break
        chosen = sorted(chosen + _to_original(more, chosen), key=lambda c: c.start)
    return Redacted(text=_collapse_links(_replace(text, chosen)), findings=tuple(c.finding() for c in chosen))


# A Markdown link whose text and target were both redacted ("[[email]](mailto:[email])") reads
# as one placeholder (docs/redaction.md, "Markdown links").
_REDACTED_LINK = re.compile(r"\[(\[(?:email|phone|secret|id)\])\]\((?:mailto:|tel:)?\1\)")


def _collapse_links(text: str) -> str:
    return _REDACTED_LINK.sub(r"\1", text)


def _detect(text: str, *, allowlist: Collection[str], public_figures: Collection[str]) -> list[Candidate]:
    """The findings in `text`, with offsets into `text` (detection itself reads the normalised copy)."""
    normalised = normalise(text)
    scan = Scan(normalised.text)
    sam_ids = Spans([m.span() for m in _SAM_ID.finditer(scan.text)])
    candidates = [c for recognize in RECOGNIZERS for c in recognize(scan)
                  if _in_scope(scan, c) and not sam_ids.overlaps(c.start, c.end)]
    # A value a label names yields to a phone when the phone is longer (it swallows it) or the
    # label is a few words away (labelled_ids.PRIORITY_FAR), but not to one read by its shape
    # alone with no phone word near it: "ЕГН-то си (8504126319)" is the label's.
    others = [c for c in candidates if c.kind != "id"]
    for labelled in [c for c in candidates if c.kind == "id" and c.rule.endswith("_label")]:
        taken = id_tagger.phones_taken_over(scan, labelled, others)
        if taken:
            candidates = [c for c in candidates if c not in taken]
            others = [c for c in others if c not in taken]
    found = Spans([(c.start, c.end) for c in candidates])
    for fallback in (c for recognize in FALLBACKS for c in recognize(scan)
                     if _in_scope(scan, c) and not sam_ids.overlaps(c.start, c.end)):
        if not found.overlaps(fallback.start, fallback.end):
            candidates.append(fallback)
            continue
        # A number read as a phone by its shape alone, with no phone word near it, that the
        # tagger reads as an identifier ("PESEL … 03271804577") is an identifier.
        taken = id_tagger.phones_taken_over(scan, fallback, candidates)
        if taken:
            candidates = [c for c in candidates if c not in taken] + [fallback]
    candidates = _without_allowed(scan.text, candidates, allowlist=allowlist, public_figures=public_figures)
    chosen = _resolve_overlaps(candidates)
    if normalised.identity:
        return chosen
    mapped = [replace(c, start=start, end=end) for c in chosen
              for start, end in (normalised.to_original(c.start, c.end),)]
    # Two findings that end and start inside one normalised group ("ﬁ" read as "fi") now overlap.
    return _resolve_overlaps(mapped)


def _to_original(found: list[Candidate], chosen: list[Candidate]) -> list[Candidate]:
    """Map candidates found in the redacted text back to offsets in the original text.

    They never overlap a placeholder (see _in_scope), so each lies in one stretch of original text;
    the shift is what the placeholders before it added or removed.
    """
    # (start in output, shift to original) of each stretch of original text in the output
    stretches: list[tuple[int, int]] = [(0, 0)]
    shift = 0
    for candidate in chosen:
        placeholder_end = candidate.start - shift + len(PLACEHOLDERS[candidate.kind])
        shift = candidate.end - placeholder_end
        stretches.append((placeholder_end, shift))
    output_starts = [start for start, _ in stretches]
    mapped = []
    for candidate in found:
        _, offset = stretches[bisect.bisect_right(output_starts, candidate.start) - 1]
        mapped.append(replace(candidate, start=candidate.start + offset, end=candidate.end + offset))
    return mapped


def _in_scope(scan: Scan, candidate: Candidate) -> bool:
    start, end = candidate.start, candidate.end
    if start >= end or scan.placeholders.overlaps(start, end):
        return False
    by_rule = candidate.rule in _SHIELDED_RULES
    if (candidate.kind in _SHIELDED_BY_CODE or by_rule) and scan.code.overlaps(start, end):
        return False
    return not ((candidate.kind in _SHIELDED_BY_URL or by_rule) and scan.urls.overlaps(start, end))


def _without_allowed(
    text: str,
    candidates: list[Candidate],
    *,
    allowlist: Collection[str],
    public_figures: Collection[str],
) -> list[Candidate]:
    if not allowlist and not public_figures:
        return candidates
    allowed_ids = {_handle_key(entry) for entry in allowlist if entry.strip()}
    figures = _occurrences(text, public_figures)
    kept = []
    for candidate in candidates:
        if candidate.kind == "id" and _handle_key(text[candidate.start:candidate.end]) in allowed_ids:
            continue
        if candidate.kind == "name" and figures.overlaps(candidate.start, candidate.end):
            continue
        kept.append(candidate)
    return kept


def _handle_key(value: str) -> str:
    return value.strip().lstrip("@").casefold()


def _occurrences(text: str, phrases: Iterable[str]) -> Spans:
    """Where each phrase occurs as whole words, case-insensitively, with any run of spaces."""
    spans: list[tuple[int, int]] = []
    for phrase in phrases:
        words = phrase.split()
        if not words:
            continue
        pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
        spans.extend(m.span() for m in re.finditer(pattern, text, re.IGNORECASE))
    return Spans(spans)


def _resolve_overlaps(candidates: list[Candidate]) -> list[Candidate]:
    """Keep the strongest of overlapping candidates: higher priority, then longer, then earlier.

    A candidate inside a longer one loses to it first, unless it is a definite format (an email, a
    known key format): the postcode "01310-200" in an address is a phone number to libphonenumber,
    but the address is the better answer. Ties are broken on every field, so the result does not
    depend on the recognizers' order.
    """
    ranked = sorted(_without_swallowed(candidates),
                    key=lambda c: (-c.priority, -(c.end - c.start), c.start, c.kind, c.rule))
    starts: list[int] = []  # the chosen spans' starts, sorted; chosen spans never overlap
    chosen: list[Candidate] = []
    for candidate in ranked:
        i = bisect.bisect_left(starts, candidate.start)
        if i < len(chosen) and chosen[i].start < candidate.end:
            continue
        if i > 0 and chosen[i - 1].end > candidate.start:
            continue
        starts.insert(i, candidate.start)
        chosen.insert(i, candidate)
    return chosen


def _without_swallowed(candidates: list[Candidate]) -> list[Candidate]:
    """Drop vague candidates that lie inside a longer candidate (see _resolve_overlaps)."""
    kept = []
    reach = -1  # the furthest end among candidates that start before the current start
    group_start, group_end = -1, -1  # the current start and the furthest end among its candidates
    for candidate in sorted(candidates, key=lambda c: (c.start, -c.end)):
        if candidate.start != group_start:
            reach = max(reach, group_end)
            group_start, group_end = candidate.start, candidate.end
        inside = reach >= candidate.end or group_end > candidate.end
        if not inside or candidate.priority >= _DEFINITE_PRIORITY:
            kept.append(candidate)
    return kept


def _replace(text: str, chosen: list[Candidate]) -> str:
    parts = []
    position = 0
    for candidate in chosen:
        parts.append(text[position:candidate.start])
        parts.append(PLACEHOLDERS[candidate.kind])
        position = candidate.end
    parts.append(text[position:])
    return "".join(parts)
