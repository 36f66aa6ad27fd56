"""The `sam` command: SAM from a shell, on sam_client.SamClient.

    sam remember "Services log one JSON object per line." --space platform
    sam recall "how do we log?" --space platform
    sam pack "release the webshop" --space webshop --budget 800
    sam handoff --space webshop
    sam import ~/Downloads/chatgpt-export.zip --source chatgpt --space me
    sam export -o about-me.jsonl
    sam token create laptop --space webshop --role contributor
    sam token list;  sam token revoke 12

The server and token come from SAM_URL / SAM_TOKEN, or the config file (sam_client.config).
Human output by default; `--json` prints SAM's answers as JSON for scripts.
Exit codes are the EXIT_* constants below (docs/client.md lists them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from sam_client import errors
from sam_client.client import SamClient
from sam_client.config import ConfigError, load_config

EXIT_OK = 0
EXIT_REFUSED = 1  # SAM refused for another reason (409 conflict, 429), or an import failed
EXIT_USAGE = 2  # bad arguments, a file that cannot be read, an unreadable config file
EXIT_AUTH = 3  # no token, or SAM answered 401 or 403
EXIT_NOT_FOUND = 4  # 404
EXIT_INVALID = 5  # 400 (413, 415): the fields SAM refused are printed
EXIT_UNAVAILABLE = 6  # 5xx, SAM unreachable, or a wait that timed out

_EXIT_BY_ERROR: list[tuple[type[errors.SamError], int]] = [
    (errors.AuthenticationError, EXIT_AUTH), (errors.PermissionDenied, EXIT_AUTH),
    (errors.NotFound, EXIT_NOT_FOUND), (errors.ValidationError, EXIT_INVALID),
    (errors.ServerError, EXIT_UNAVAILABLE), (errors.TransportError, EXIT_UNAVAILABLE),
]

Handler = Callable[[SamClient, argparse.Namespace], Any]


class Output:
    """Writes answers: a model or dict as JSON with --json, else the command's human text."""

    def __init__(self, *, as_json: bool, stream: TextIO) -> None:
        self.as_json = as_json
        self.stream = stream

    def emit(self, answer: Any, human: Callable[[], str]) -> None:
        if self.as_json:
            self.stream.write(json.dumps(_jsonable(answer), indent=2, default=str) + "\n")
        else:
            text = human()
            self.stream.write(text if text.endswith("\n") else text + "\n")


def _jsonable(answer: Any) -> Any:
    if isinstance(answer, BaseModel):
        return answer.model_dump(mode="json", by_alias=True)
    if isinstance(answer, list):
        return [_jsonable(item) for item in answer]
    return answer


# --- commands -----------------------------------------------------------------------------------

def _remember(sam: SamClient, args: argparse.Namespace) -> Any:
    content = sys.stdin.read() if args.content == "-" else args.content
    title = args.title or _title_from(content)
    fields: dict[str, Any] = {"kind": args.kind, "tags": args.tag or None}
    written = sam.remember(space=args.space, title=title, content=content,
                           idempotency_key=args.idempotency_key, **fields)
    memory = written.memory

    def human() -> str:
        if memory is None or not written.persisted:
            return "Nothing kept: the memory mode of this space or of yours keeps nothing now."
        verb = "Reinforced" if written.reinforced else "Stored"
        return f"{verb} {memory.id} (version {memory.version}) in {memory.space}: {memory.title}"
    return written, human


def _title_from(content: str) -> str:
    """A title from the text's first line, cut at a word near 80 characters."""
    first = content.strip().splitlines()[0] if content.strip() else ""
    if len(first) <= 80:
        return first
    return first[:80].rsplit(" ", 1)[0] + "…"


def _recall(sam: SamClient, args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {"spaces": args.space or None, "k": args.k, "active_task": args.task}
    result = sam.recall(args.query, **{key: value for key, value in options.items() if value is not None})

    def human() -> str:
        if not result.memories:
            return "Nothing recalled."
        lines = []
        for rank, hit in enumerate(result.memories, start=1):
            lines.append(f"{rank}. {hit.title}  [{hit.kind}, {hit.space}, score {hit.score:.2f}]  {hit.id}")
            if hit.rationale:
                lines.append(f"   {hit.rationale}")
        return "\n".join(lines)
    return result, human


def _pack(sam: SamClient, args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {"spaces": args.space or None, "token_budget": args.budget,
                               "pack_type": "boot" if args.boot else None}
    pack = sam.context_pack(args.query, **{key: value for key, value in options.items() if value is not None})
    return pack, lambda: pack.markdown


def _handoff(sam: SamClient, args: argparse.Namespace) -> Any:
    handoff = sam.session_handoff(args.session) if args.session else sam.latest_handoff(args.space)
    return handoff, lambda: handoff.markdown


def _import(sam: SamClient, args: argparse.Namespace) -> Any:
    path = Path(args.file).expanduser()
    if not path.is_file():
        raise _UsageError(f"{path} is not a file")
    started = sam.upload_chat_history(args.space, path, source=args.source)
    current = started
    if not args.no_wait:
        try:
            current = sam.wait_for_chat_import(started.id, until_final=not args.no_final,
                                               timeout=args.timeout, interval=args.interval)
        except TimeoutError as error:
            raise errors.TransportError(f"{error}; follow it with GET /api/v1/chat-imports/{started.id}/",
                                        code="timeout") from error

    def human() -> str:
        lines = [f"Import {current.id} into {current.space} ({current.source}, {current.file_name}): "
                 f"{current.status}"]
        if current.error:
            lines.append(f"  error: {current.error}")
        for key, value in current.report.items():
            if isinstance(value, int | float | str):
                lines.append(f"  {key}: {value}")
        lines.append(f"  memories: {current.memories}; "
                     + ("final" if current.final else f"still pending: {current.pending}"))
        return "\n".join(lines)
    failed = current.status == "failed"
    return current, human, (EXIT_REFUSED if failed else EXIT_OK)


def _export(sam: SamClient, args: argparse.Namespace) -> Any:
    count = 0
    target: TextIO = Path(args.output).expanduser().open("w", encoding="utf-8") if args.output else sys.stdout
    try:
        for line in sam.export_me(include_archived=args.include_archived):
            target.write(line + "\n")
            count += 1
    finally:
        if args.output:
            target.close()
    if args.output:
        summary = {"exported": count, "file": str(args.output)}
        return summary, lambda: f"Exported {count} memories to {args.output}"
    return None  # the JSONL itself was the output


def _token_list(sam: SamClient, args: argparse.Namespace) -> Any:
    tokens = list(sam.iter_tokens())

    def human() -> str:
        if not tokens:
            return "No tokens."
        rows = []
        for token in tokens:
            state = "usable" if token.usable else ("revoked" if token.revoked_at else "expired")
            spaces = ",".join(token.spaces) if token.spaces is not None else "all my spaces"
            used = _when(token.last_used_at) or "never used"
            rows.append(f"{token.id}\t{token.name}\t{token.prefix}…\t{token.role or '-'}\t{spaces}\t"
                        f"{state}\t{used}")
        return "id\tname\tprefix\trole\tspaces\tstate\tlast used\n" + "\n".join(rows)
    return tokens, human


def _when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else ""


def _token_create(sam: SamClient, args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {"spaces": args.space or None, "role": args.role, "scopes": args.scope or None,
                               "expires_at": args.expires_at}
    created = sam.create_token(args.name, **{key: val for key, val in options.items() if val is not None})

    def human() -> str:
        return (f"Token {created.id} ({created.name}) created. Its secret, shown this once:\n"
                f"{created.secret}")
    return created, human


def _token_revoke(sam: SamClient, args: argparse.Namespace) -> Any:
    sam.revoke_token(args.id)
    return {"revoked": args.id}, lambda: f"Token {args.id} revoked."


class _UsageError(Exception):
    pass


# --- parser -------------------------------------------------------------------------------------

def _datetime(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 date-time: {value!r}") from error
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give an offset (e.g. 2027-01-31T00:00:00Z): {value!r}")
    return moment


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: an option given before the command is not reset by the subcommand's default.
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print SAM's answers as JSON (for scripts)")
    common.add_argument("--url", default=argparse.SUPPRESS,
                        help="SAM's base URL (default: $SAM_URL, the config file, http://127.0.0.1:8000)")

    parser = argparse.ArgumentParser(prog="sam", description="SAM, the memory server, from a shell.",
                                     parents=[common],
                                     epilog="Exit codes: 0 ok, 1 refused (conflict) or import failed, "
                                            "2 usage, 3 authentication or permission, 4 not found, "
                                            "5 invalid input, 6 server or network.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    remember = commands.add_parser("remember", parents=[common], help="store a memory")
    remember.add_argument("content", help="the memory's text ('-' reads it from stdin)")
    remember.add_argument("--space", required=True)
    remember.add_argument("--title", help="default: the text's first line")
    remember.add_argument("--kind", help="fact, preference, decision, solution, procedure, gotcha, …")
    remember.add_argument("--tag", action="append", help="a tag (repeat for more)")
    remember.add_argument("--idempotency-key", help="reuse it to retry this write safely")
    remember.set_defaults(handler=_remember)

    recall = commands.add_parser("recall", parents=[common], help="the memories that matter for a query")
    recall.add_argument("query")
    recall.add_argument("--space", action="append", help="a space to recall from (repeat; default: all mine)")
    recall.add_argument("-k", type=int, help="how many (1-50, default 5)")
    recall.add_argument("--task", help="the task at hand, to rank by")
    recall.set_defaults(handler=_recall)

    pack = commands.add_parser("pack", parents=[common], help="a context pack as Markdown, within a budget")
    pack.add_argument("query", nargs="?", default="")
    pack.add_argument("--space", action="append")
    pack.add_argument("--budget", type=int, help="token budget (default 1500)")
    pack.add_argument("--boot", action="store_true",
                      help="a boot pack: active tasks, decisions, changed files")
    pack.set_defaults(handler=_pack)

    handoff = commands.add_parser("handoff", parents=[common], help="the handoff the next session reads")
    which = handoff.add_mutually_exclusive_group(required=True)
    which.add_argument("--space", help="the latest session's handoff in this space")
    which.add_argument("--session", help="this session's handoff")
    handoff.set_defaults(handler=_handoff)

    chat = commands.add_parser("import", parents=[common], help="import a chat history file into a space")
    chat.add_argument("file")
    chat.add_argument("--space", required=True)
    chat.add_argument("--source", required=True, choices=["claude_code", "chatgpt", "cursor", "jsonl"])
    chat.add_argument("--no-wait", action="store_true", help="return once uploaded (status: queued)")
    chat.add_argument("--no-final", action="store_true",
                      help="wait until the history is read, not until its memories are embedded and checked")
    chat.add_argument("--timeout", type=float, default=600.0, help="seconds to wait (default 600)")
    chat.add_argument("--interval", type=float, default=1.0, help=argparse.SUPPRESS)
    chat.set_defaults(handler=_import)

    export = commands.add_parser("export", parents=[common], help="everything SAM knows about me (JSONL)")
    export.add_argument("-o", "--output", help="write to this file (default: stdout)")
    export.add_argument("--include-archived", action="store_true")
    export.set_defaults(handler=_export)

    token = commands.add_parser("token", parents=[common], help="my agent tokens")
    token_commands = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    token_list = token_commands.add_parser("list", parents=[common], help="my tokens")
    token_list.set_defaults(handler=_token_list)
    token_create = token_commands.add_parser("create", parents=[common],
                                             help="a new token (secret shown once)")
    token_create.add_argument("name")
    token_create.add_argument("--space", action="append",
                              help="limit it to a space (repeat; default: all mine)")
    token_create.add_argument("--role", help="cap its role (no higher than your own)")
    token_create.add_argument("--scope", action="append", help="a scope (repeat)")
    token_create.add_argument("--expires-at", type=_datetime, help="RFC 3339, e.g. 2027-01-31T00:00:00Z")
    token_create.set_defaults(handler=_token_create)
    token_revoke = token_commands.add_parser("revoke", parents=[common], help="revoke a token by id")
    token_revoke.add_argument("id")
    token_revoke.set_defaults(handler=_token_revoke)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # exits 2 on a usage error
    as_json = bool(getattr(args, "json", False))
    try:
        config = load_config(url=getattr(args, "url", None))
    except ConfigError as error:
        _fail(str(error), as_json=as_json, code="not_configured")
        return EXIT_AUTH if "no token" in str(error) else EXIT_USAGE
    output = Output(as_json=as_json, stream=sys.stdout)
    try:
        with SamClient(config.url, config.token) as sam:
            outcome = args.handler(sam, args)
    except errors.SamError as error:
        _fail(str(error), as_json=as_json, code=error.code, status=error.status, fields=error.fields)
        return _exit_code(error)
    except (_UsageError, OSError) as error:
        _fail(str(error), as_json=as_json, code="usage")
        return EXIT_USAGE
    if outcome is None:
        return EXIT_OK
    answer, human, *rest = outcome
    output.emit(answer, human)
    return rest[0] if rest else EXIT_OK


def _exit_code(error: errors.SamError) -> int:
    for kind, code in _EXIT_BY_ERROR:
        if isinstance(error, kind):
            return code
    return EXIT_REFUSED


def _fail(message: str, *, as_json: bool, code: str, status: int = 0,
          fields: dict[str, list[str]] | None = None) -> None:
    """The error on stderr; with --json also SAM's error shape on stdout, for scripts."""
    print(f"sam: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": {"code": code, "status": status, "message": message,
                                    "fields": fields or {}}}))


if __name__ == "__main__":
    raise SystemExit(main())
