"""PII redaction of everything SAM is about to store, with a report of what changed.

The detectors live in governance.redaction; this module walks storage-bound values
(strings nested in lists and dicts) and reports each redaction by path, kind and position.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any


def redact_value(value: Any, *, path: str, allowlist: Collection[str] = (),
                 public_figures: Collection[str] = (), report: list[dict[str, Any]]) -> Any:
    """`value` with every string in it redacted; appends one report entry per redaction.

    Paths use the API's notation: `content`, `canonical_phrases[2]`, `metadata.owner`.
    Positions are offsets into the original string.
    """
    if isinstance(value, str):
        from governance.redaction import redact_text

        result = redact_text(value, allowlist=allowlist, public_figures=public_figures)
        report.extend(
            {"path": path, "kind": f.kind, "pattern": f.rule, "start": f.start, "end": f.end}
            for f in result.findings
        )
        return result.text
    if isinstance(value, list):
        return [redact_value(item, path=f"{path}[{i}]", allowlist=allowlist,
                             public_figures=public_figures, report=report)
                for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: redact_value(item, path=f"{path}.{key}" if path else str(key),
                                  allowlist=allowlist, public_figures=public_figures, report=report)
                for key, item in value.items()}
    return value


def redact_fields(values: dict[str, Any], *, fields: Iterable[str], allowlist: Collection[str] = (),
                  public_figures: Collection[str] = ()) -> list[dict[str, Any]]:
    """Redact `fields` of `values` in place; returns the redaction report."""
    report: list[dict[str, Any]] = []
    for name in fields:
        if name in values and values[name] is not None:
            values[name] = redact_value(values[name], path=name, allowlist=allowlist,
                                        public_figures=public_figures, report=report)
    return report


def public_figures_of(metadata: Any) -> list[str]:
    """Names the source marks as public figures (metadata.public_figures), kept unredacted."""
    if isinstance(metadata, dict) and isinstance(metadata.get("public_figures"), list):
        return [str(name) for name in metadata["public_figures"] if str(name).strip()]
    return []
