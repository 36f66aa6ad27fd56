"""PII redaction of everything SAM is about to store, with a report of what changed.

The detectors live in governance.redaction; this module walks storage-bound values
(strings nested in lists and dicts, dictionary keys included) and reports each redaction by
path, kind and position. redact_free_text is the entry point for one free-text value.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any


def redact_free_text(text: str, *, path: str = "", allowlist: Collection[str] = (),
                     public_figures: Collection[str] = (), report: list[dict[str, Any]] | None = None) -> str:
    """`text` with personal data and secrets replaced by placeholders ("[email]", "[phone]", …).

    The one entry point for a single free-text value a service is about to store (a restriction
    reason, a space description, a comment). `path` names the field in the report entries
    appended to `report`, when one is given; see redact_value for their shape.
    """
    return redact_value(text, path=path, allowlist=allowlist, public_figures=public_figures,
                        report=report if report is not None else [])


# Redacted texts by (text, allowlist, public figures): what one batch of writes has redacted
# already. Redaction is deterministic, so a text seen before (a metadata key, a source
# type, a speaker's name) is answered from here. Callers keep one for a request only, so no
# text outlives the write it came with.
RedactionMemo = dict[tuple[str, tuple[str, ...], tuple[str, ...]], Any]


def redact_value(value: Any, *, path: str, allowlist: Collection[str] = (),
                 public_figures: Collection[str] = (), report: list[dict[str, Any]],
                 memo: RedactionMemo | None = None) -> Any:
    """`value` with every string in it redacted, dictionary keys included; appends one report
    entry per redaction.

    Report entries are {"path", "kind", "pattern", "start", "end"}, plus "part": "key" when the
    redaction was in a dictionary key. Paths use the API's notation: `content`,
    `canonical_phrases[2]`, `metadata.owner`; a path never holds what was redacted (a key is
    written as redacted). Positions are offsets into the original string. Two keys that redact
    to the same text are told apart by a suffix ("[email]", "[email] (2)"), so no value is lost.

    Walks the value with an explicit stack, not recursion: any nesting depth is safe (a value
    nested 5,000 deep costs no more than a flat one of the same size).

    `memo`, when given, answers texts redacted before with the same allowlist and public
    figures (see RedactionMemo) and keeps the new ones.
    """
    memo_key = (tuple(allowlist), tuple(public_figures))

    def redact(text: str, at: str | None, part: str | None = None) -> tuple[str, list[dict[str, Any]]]:
        from governance.redaction import redact_text

        key = (text, *memo_key)
        result = memo.get(key) if memo is not None else None
        if result is None:
            result = redact_text(text, allowlist=allowlist, public_figures=public_figures)
            if memo is not None:
                memo[key] = result
        entries = [{"path": at, "kind": f.kind, "pattern": f.rule, "start": f.start, "end": f.end,
                    **({"part": part} if part else {})} for f in result.findings]
        report.extend(entries)
        return result.text, entries

    if not isinstance(value, (list, dict)):
        return redact(value, path)[0] if isinstance(value, str) else value
    root: list[Any] | dict[Any, Any] = [] if isinstance(value, list) else {}
    # Each frame: the items still to visit of one container, the copy being built, its path.
    stack: list[tuple[Iterator[tuple[Any, Any]], list[Any] | dict[Any, Any], str]] = [
        (_items(value), root, path)]
    while stack:
        items, target, here = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            continue
        key, item = step
        if isinstance(target, dict):
            key_entries: list[dict[str, Any]] = []
            if isinstance(key, str):
                key, key_entries = redact(key, None, "key")
            key = _unique_key(target, key)
            at = f"{here}.{key}" if here else str(key)
            for entry in key_entries:  # the path names the key as stored, never as written
                entry["path"] = at
        else:
            at = f"{here}[{key}]"
        if isinstance(item, (list, dict)):
            child: Any = [] if isinstance(item, list) else {}  # else any JSON value, below
            stack.append((_items(item), child, at))
        else:
            child = redact(item, at)[0] if isinstance(item, str) else item
        if isinstance(target, dict):
            target[key] = child
        else:
            target.append(child)
    return root


def _items(container: list[Any] | dict[Any, Any]) -> Iterator[tuple[Any, Any]]:
    return iter(enumerate(container)) if isinstance(container, list) else iter(container.items())


def _unique_key(target: dict[Any, Any], key: Any) -> Any:
    """`key`, or `key (2)`, `key (3)` … when a redacted key collides with one already written."""
    if key not in target or not isinstance(key, str):
        return key
    n = 2
    while f"{key} ({n})" in target:
        n += 1
    return f"{key} ({n})"


def redact_fields(values: dict[str, Any], *, fields: Iterable[str], allowlist: Collection[str] = (),
                  public_figures: Collection[str] = (), memo: RedactionMemo | None = None,
                  ) -> list[dict[str, Any]]:
    """Redact `fields` of `values` in place; returns the redaction report. `memo`: see
    redact_value."""
    report: list[dict[str, Any]] = []
    for name in fields:
        if name in values and values[name] is not None:
            values[name] = redact_value(values[name], path=name, allowlist=allowlist,
                                        public_figures=public_figures, report=report, memo=memo)
    return report


def public_figures_of(metadata: Any) -> list[str]:
    """Names the source marks as public figures (metadata.public_figures), kept unredacted."""
    if isinstance(metadata, dict) and isinstance(metadata.get("public_figures"), list):
        return [str(name) for name in metadata["public_figures"] if str(name).strip()]
    return []
