"""Server paths taken out of what an import stores and answers (its report, its error).

A reader names what it could not read by where it found it, and an exception's message may
name a file: left as they are, a report would show the server's folders and the name of the
home folder SAM runs from. What is under the import's upload folder becomes relative to it,
SAM's var/ folder becomes `var/`, and a home folder (SAM's or anyone's) becomes `~`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings

# /home/NAME and /Users/NAME (macOS), and root's home: the folder's name is a person's.
_HOME = re.compile(r"(?<![\w.~])/(?:home|Users)/[^/\s'\"]+|(?<![\w.~])/root(?=/|\b)")


def _prefixes(upload: Path | None) -> list[tuple[str, str]]:
    """(path, what it becomes), the deepest first, so the upload wins over var/."""
    found = []
    if upload is not None:
        found += [(str(upload / "unpacked"), "."), (str(upload), ".")]
    found += [(str(Path(settings.VAR_DIR)), "var"), (str(Path(settings.BASE_DIR)), "."),
              (str(Path.home()), "~")]
    return sorted({p: r for p, r in found if p not in ("", "/")}.items(), key=lambda pr: -len(pr[0]))


def strip_text(text: str, *, upload: Path | None = None) -> str:
    for prefix, replacement in _prefixes(upload):
        # A whole folder name only (not /root in /rootfs); "./x" reads as "x", so a path
        # under the upload is named from the upload's root.
        under = "" if replacement == "." else replacement + "/"
        # (The replacements hold no backslash, so re.sub takes them as they are.)
        text = re.sub(re.escape(prefix) + "/", under, text)
        text = re.sub(re.escape(prefix) + r"(?![\w.-])", replacement, text)
    return _HOME.sub("~", text)


def strip(value: Any, *, upload: Path | None = None) -> Any:
    """`value` (text, or JSON: dicts, lists) with every server path in its strings taken out."""
    if isinstance(value, str):
        return strip_text(value, upload=upload)
    if isinstance(value, dict):
        return {key: strip(item, upload=upload) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [strip(item, upload=upload) for item in value]
    return value
