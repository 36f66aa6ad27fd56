#!/usr/bin/env python3
"""SAM's Claude Code hooks: send the session to SAM when it ends, read SAM's memory when it starts.

Installed by `manage.py sam_hooks install PROJECT_DIR` as `.claude/hooks/sam_hook.py`, and run by
Claude Code with its hook JSON on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `reason` or `source`):

    python3 .claude/hooks/sam_hook.py session-end    # uploads the transcript (an incremental import)
    python3 .claude/hooks/sam_hook.py session-start  # prints the latest handoff and the boot pack

Settings, first found wins: the environment (SAM_URL, SAM_TOKEN, SAM_SPACE), the project's
`.sam.toml` (`url`, `space`; a token there is not read: project files end up in repositories),
then `~/.config/sam/config.toml` (`url`, `token`, `space`; $XDG_CONFIG_HOME is honoured).
SAM_HOOK_TIMEOUT bounds each request (seconds, default 10).

A hook must never break the agent's session: whatever goes wrong (SAM down, no token, a space
that refuses the source), it writes one line to stderr and exits 0. Standard library only, so
it runs with any Python 3 Claude Code finds on PATH, not SAM's virtualenv.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

SOURCE = "claude_code"
DEFAULT_TIMEOUT = 10.0
BOOT_TOKENS = 1500  # the boot pack's budget: what a session start adds to the context


class HookError(Exception):
    """Something the hook cannot do; its message is the one line written to stderr."""


def _toml(path: Path) -> dict[str, Any]:
    """A config file's top-level keys (tomllib where there is one, Python 3.11+; else the
    `key = "value"` lines these files hold)."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        import tomllib

        return tomllib.loads(text)
    except ImportError:
        values: dict[str, Any] = {}
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and not line.lstrip().startswith(("#", "[")):
                values[key.strip()] = value.strip().strip("\"'")
        return values
    except ValueError as exc:
        raise HookError(f"{path} is not valid TOML: {exc}") from exc


def settings(project: Path) -> dict[str, str]:
    """url, token and space: the environment, then the project's .sam.toml, then the user's config."""
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    user = _toml(config_home / "sam" / "config.toml")
    project_file = {k: v for k, v in _toml(project / ".sam.toml").items() if k != "token"}
    found = {}
    for key in ("url", "token", "space"):
        value = os.environ.get(f"SAM_{key.upper()}") or project_file.get(key) or user.get(key) or ""
        found[key] = str(value).strip()
    missing = [f"SAM_{k.upper()}" for k, v in found.items() if not v]
    if missing:
        raise HookError(f"not configured: set {', '.join(missing)} (or ~/.config/sam/config.toml)")
    # The server's root: SAM_URL may also be given as the API's root (…/api/v1), as in the README.
    url = found["url"].rstrip("/")
    found["url"] = url[: -len("/api/v1")] if url.endswith("/api/v1") else url
    return found


def _timeout() -> float:
    try:
        return float(os.environ.get("SAM_HOOK_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


def request(config: dict[str, str], method: str, path: str, *, body: bytes | None = None,
            content_type: str = "application/json") -> dict[str, Any]:
    """One call to SAM's API; raises HookError with SAM's own message when it refuses."""
    headers = {"Authorization": f"Bearer {config['token']}", "Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = content_type
    call = urllib.request.Request(config["url"] + path, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(call, timeout=_timeout()) as answer:
            return json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]["message"]
        except Exception:
            message = exc.reason
        raise HookError(f"SAM answered {exc.code}: {message}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise HookError(f"SAM is not reachable at {config['url']}: {reason}") from exc


def multipart(fields: dict[str, str], file_field: str, file_name: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body (what the upload endpoint reads) and its Content-Type."""
    boundary = uuid.uuid4().hex
    safe_name = file_name.replace('"', "_").replace("\r", "_").replace("\n", "_")
    heads = [f'Content-Disposition: form-data; name="{name}"\r\n\r\n{value}'
             for name, value in fields.items()]
    parts = [f"--{boundary}\r\n{head}\r\n".encode() for head in heads]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                 f'filename="{safe_name}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
                 + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def project_dir(event: dict[str, Any]) -> Path:
    return Path(os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or os.getcwd())


def session_end(event: dict[str, Any]) -> str:
    """Upload the session's transcript as a claude_code import; SAM reads only what is new."""
    transcript = Path(str(event.get("transcript_path") or "")).expanduser()
    if not transcript.is_file():
        raise HookError(f"no transcript to send (transcript_path: {transcript})")
    config = settings(project_dir(event))
    # The file's own name: SAM keys the conversation by the session id inside it, and names
    # the file in each memory's source.
    body, content_type = multipart({"source": SOURCE}, "file", transcript.name, transcript.read_bytes())
    space = urllib.parse.quote(config["space"], safe="")
    answer = request(config, "POST", f"/api/v1/spaces/{space}/chat-imports/", body=body,
                     content_type=content_type)
    return str(answer.get("id", ""))


def session_start(event: dict[str, Any]) -> str:
    """The space's latest handoff and its boot pack, as Markdown for the agent's context."""
    config = settings(project_dir(event))
    space = config["space"]
    parts = []
    try:
        handoff = request(config, "GET", "/api/v1/sessions/latest-handoff/?" + urllib.parse.urlencode(
            {"space": space}))
        parts.append(str(handoff.get("markdown") or "").strip())
    except HookError as exc:
        if "answered 404" not in str(exc):  # no session yet: the boot pack alone
            raise
    pack = request(config, "POST", "/api/v1/context-packs/", body=json.dumps(
        {"spaces": [space], "pack_type": "boot", "token_budget": BOOT_TOKENS}).encode())
    parts.append(str(pack.get("markdown") or "").strip())
    found = [p for p in parts if p]
    if not found:
        return ""
    return f"# What SAM remembers for this project (space `{space}`)\n\n" + "\n\n".join(found) + "\n"


COMMANDS = {"session-end": session_end, "session-start": session_start}


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else ""
    try:
        if command not in COMMANDS:
            raise HookError(f"usage: sam_hook.py {'|'.join(COMMANDS)}")
        raw = sys.stdin.read() if not sys.stdin.isatty() else ""
        event = json.loads(raw) if raw.strip() else {}
        if not isinstance(event, dict):
            raise HookError("the hook input is not a JSON object")
        out = COMMANDS[command](event)
        if command == "session-start" and out:
            sys.stdout.write(out)
    except HookError as exc:
        sys.stderr.write(f"sam hook {command}: {exc}\n")
    except Exception as exc:  # never break the session: one line, exit 0
        sys.stderr.write(f"sam hook {command}: {type(exc).__name__}: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
