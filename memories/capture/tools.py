"""What a coding agent's tool traffic says: which command a call ran, which files it changed
and how, whether a run failed (and its error's telling line) or passed (and the line that
says so).

Claude Code and Cursor name their tools differently (`Bash` / `run_terminal_cmd`, `Edit` /
`search_replace` / `edit_file`); the readers keep the names as they are and this module knows
both. Read by memories.capture.exchanges (entities) and memories.capture.tool_solutions.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from memories.capture.conversation import ToolCall, ToolResult

RUN_TOOLS = frozenset({"Bash", "run_terminal_cmd", "run_terminal_command", "run_terminal_command_v2",
                       "shell", "terminal"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "edit_file", "edit_file_v2",
                        "search_replace", "write", "create_file", "apply_patch"})
# A change is shown, not replayed: this much of each side is enough to recognise it.
CHANGE_CHARS = 300


@dataclass(frozen=True)
class Change:
    file: str
    old: str
    new: str


def command(call: ToolCall) -> str:
    """The shell command a call ran, or ""."""
    if call.name not in RUN_TOOLS:
        return ""
    value = call.input.get("command") or call.input.get("cmd") or ""
    return str(value).strip()


def changes(call: ToolCall) -> list[Change]:
    """The files a call changed, each with its old and new text (bounded; "" when unknown)."""
    if call.name not in EDIT_TOOLS:
        return []
    given = call.input
    file = str(given.get("file_path") or given.get("target_file") or given.get("path")
               or given.get("notebook_path") or "")
    if not file:
        return []
    if call.name == "MultiEdit":
        edits = [e for e in given.get("edits") or [] if isinstance(e, dict)]
        found = [_change(file, e.get("old_string"), e.get("new_string")) for e in edits]
        return found or [_change(file, "", "")]
    new = next((given[key] for key in ("new_string", "content", "code_edit", "new_source", "contents")
                if given.get(key)), "")
    return [_change(file, given.get("old_string"), new)]


def _change(file: str, old: object, new: object) -> Change:
    return Change(file=file, old=str(old or "")[:CHANGE_CHARS], new=str(new or "")[:CHANGE_CHARS])


# Lines that say a run failed, the most telling first: the error itself before the summary.
_SIGNATURES = [
    re.compile(r"^E\s{2,}\S.*$", re.MULTILINE),  # pytest's assertion / exception line
    re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit)\b:?.*$", re.MULTILINE),
    re.compile(r"^error(?:\[E\d+\])?:.*$|^.*\berror TS\d+:.*$|^.*:\d+:\d+: error:.*$", re.MULTILINE),
    re.compile(r"^[ \t│|╷>]*(?:Error|ERROR)\b:? \S.*$", re.MULTILINE),
    re.compile(r"^npm ERR! (?!code\b|errno\b|A complete log).*$", re.MULTILINE),
    re.compile(r"^npm ERR!.*$", re.MULTILINE),
    re.compile(r"^.*\b(?:cannot find symbol|undefined reference|undefined: \w+|panic:|"
               r"fatal error|FATAL|Segmentation fault|command not found|No such file or directory).*$",
               re.MULTILINE),
    re.compile(r"^\s+\S+_test\.go:\d+:.*$", re.MULTILINE),  # go test's failing assertion
    re.compile(r"^(?:FAILED|FAIL|--- FAIL:|ERROR:?)\s.*$", re.MULTILINE),
    re.compile(r"^.*\b[1-9]\d* (?:failed|errors?)\b.*$", re.MULTILINE),
]
_FAILURE = re.compile(r"Traceback \(most recent call last\)|^FAILED\b|^FAIL\b|^--- FAIL:|\berror\[E\d+\]|"
                      r"^npm ERR!|\b[1-9]\d* failed\b|\b[1-9]\d* errors? (?:in|during)\b|"
                      r"\b(?:exit(?:ed with)? (?:code|status)|Exit code)\s*[1-9]|"
                      r"^error(?:\[E\d+\])?:|\berror TS\d+:|:\d+:\d+: error:|"
                      r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):|\bBUILD FAILED\b|\bCompilation failed\b|"
                      r"^make: \*\*\*", re.MULTILINE)
# Lines that say a run passed, the most telling first: a count of passed tests before a file's PASS.
_PASSED = [re.compile(p, re.MULTILINE) for p in (
    r"^.*\b\d+ passed\b.*$", r"^.*\btest result: ok\b.*$", r"^.*\bAll (?:\d+ )?(?:tests|checks) passed.*$",
    r"^OK\b.*$", r"^.*\b(?:Build succeeded|BUILD SUCCEEDED|BUILD SUCCESSFUL|Compiled successfully)\b.*$",
    r"^.*\b(?:Found 0 errors|Success: no issues found|0 (?:errors|failures))\b.*$", r"^ok\s+\S+.*$",
    r"^PASS\b.*$")]


def failed(result: ToolResult) -> bool:
    """Whether a run's result says it failed: an error flag, or a failure in its output."""
    return result.is_error or bool(_FAILURE.search(result.text))


def signature(text: str) -> str:
    """The line of a failing run that says what went wrong, as the run wrote it."""
    for pattern in _SIGNATURES:
        match = pattern.search(text)
        if match and match.group(0).strip():
            return match.group(0).strip()[:200]
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("[…")]
    return (lines[-1] if lines else "")[:200]


# A command sent to the background (Claude Code's `run_in_background`) has not finished: its
# answer proves nothing.
_BACKGROUND = re.compile(r"\A\s*Command running in background|\brunning in the background with ID\b",
                         re.IGNORECASE)


def passing_line(result: ToolResult) -> str:
    """The line of a run's output that says it passed, or "" when the run did not pass.

    A run that exits cleanly without a line saying so (a script that prints nothing) counts
    as passed by its last line, or by its clean exit."""
    if failed(result) or _BACKGROUND.search(result.text):
        return ""
    for pattern in _PASSED:
        match = pattern.search(result.text)
        if match:
            return match.group(0).strip()[:200]
    lines = [line.strip() for line in result.text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "exit code 0"


# Wrappers before the program that says what kind of run it is.
_PREFIXES = ({"uv", "run"}, {"poetry", "run"}, {"pipenv", "run"}, {"pnpm", "exec"}, {"bundle", "exec"},
             {"python", "-m"}, {"python3", "-m"}, {"npx"}, {"bunx"}, {"sudo"}, {"time"}, {"env"},
             {"docker", "compose", "exec"})
_SUBCOMMANDS = frozenset({"npm", "pnpm", "yarn", "bun", "cargo", "go", "make", "dotnet", "mvn", "gradle",
                          "gradlew", "docker", "deno", "just", "mix", "rake", "tox", "nox", "git", "kubectl",
                          "terraform", "helm", "uv", "poetry", "pip", "swift", "zig", "composer", "php"})
_INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "bash", "sh", "zsh", "perl", "php",
                           "Rscript"})
# Programs that look or move things around a run, not runs that check the code.
_NOT_CHECKS = frozenset({"cd", "export", "source", ".", "set", "echo", "printf", "pushd", "popd", "sleep",
                         "true", "ls", "cat", "head", "tail", "less", "grep", "rg", "ag", "find", "fd", "wc",
                         "sort", "uniq", "cut", "tr", "sed", "awk", "jq", "tee", "xargs", "which", "pwd",
                         "mkdir", "cp", "mv", "rm", "touch", "chmod", "chown", "ln", "diff", "git", "curl",
                         "wget", "open", "code", "clear", "date", "env", "sudo", "time"})
# Commands that change the project rather than check it: a fix as much as an edit is.
_FIXING = re.compile(r"\b(?:install|add|remove|uninstall|upgrade|makemigrations|migrate|generate|codegen|"
                     r"lock|sync|update|tidy|vendor|chmod|chown|mkdir|ln -s|sed -i|patch|apply)\b")


def command_kinds(text: str) -> list[str]:
    """The kinds of run a command makes, so a later run of the same kind can prove a fix:
    `pytest tests/x.py -q` and `uv run pytest` are both "pytest", `go test ./...` and
    `go test ./internal/store/...` both "go test", `npm run test` and `npm test` both "npm test";
    `cargo build && cargo test` is both "cargo build" and "cargo test". Looking around (`cd`,
    `ls`, `| tail -3`) is no run."""
    kinds = []
    for segment in re.split(r"&&|\|\||;|\||\n", text):
        kind = _kind(segment)
        if kind and kind not in kinds:
            kinds.append(kind)
    return kinds


def fixing(text: str) -> bool:
    """Whether a command changes the project (installs, migrations, generated code)."""
    return bool(_FIXING.search(text))


def _kind(segment: str) -> str:
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    words = [w for w in words if not re.match(r"^\w+=", w)]  # FOO=bar before the program
    for prefix in _PREFIXES:
        if words and {w.rsplit("/", 1)[-1] for w in words[:len(prefix)]} == prefix:
            words = words[len(prefix):]
    while words and (words[0] in ("timeout", "nice") or re.fullmatch(r"\d+[smh]?", words[0])):
        words = words[1:]
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program in _NOT_CHECKS or program.startswith("2>"):
        return ""
    rest = [w for w in words[1:] if not w.startswith("-") and not w.startswith("2>")]
    if program in _INTERPRETERS and rest:  # the script is the run: `python manage.py test`
        script = rest[0].rsplit("/", 1)[-1]
        return f"{script} {rest[1]}" if script == "manage.py" and len(rest) > 1 else script
    if program in _SUBCOMMANDS and rest:
        scripted = rest[0] == "run" and program in ("npm", "pnpm", "yarn", "bun") and len(rest) > 1
        return f"{program} {rest[1] if scripted else rest[0]}"
    return program
