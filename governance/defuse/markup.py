"""Markup that can pose as a prompt's structure or carry data out, made inert.

- Chat-template tokens and fake system prompts: ChatML (`<|im_start|>`), Llama (`[INST]`,
  `<<SYS>>`), `<system>`-style role tags and role headings (`### System:`, a line that
  starts `Assistant:`). Their brackets turn into look-alikes (‹ › ⟦ ⟧), so a reader still
  sees what was written but no template or parser takes it for a turn.
- Tool calls written as text: XML tool tags (`<tool_call>`, `<function_calls>`, `<invoke>`)
  the same way, and JSON objects shaped like a call (a name with arguments, `tool_calls`,
  `function_call`) with their braces made look-alikes (⦃ ⦄).
- What a renderer fetches or a click sends: Markdown images and HTML `<img>` with a remote
  address, and links (Markdown, reference-style, or bare) whose address carries a query
  string or a template (`{…}`, `$VAR`, `%7B…`). They become plain text naming the host and
  path, without the query. A link with no query, and a bare address without a template
  (documentation URLs), stay as they are.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SPECIAL_TOKEN = re.compile(r"<\|\s*[\w.:/-]{1,40}\s*\|>")
_LLAMA = re.compile(r"\[\s*/?\s*(INST|SYS)\s*\]|<<\s*/?\s*SYS\s*>>|</?s>(?=\s|$|\[|<)", re.IGNORECASE)
# Role tags, and the delimiters prompts put around data (closing one would let what follows
# pose as the prompt).
_ROLE_WORDS = (r"system|assistant|developer|user|human|model|ai|bot|instructions?|prompt|im_start|im_end|"
               r"sam_user_memory|context|memory|memories|untrusted[\w-]*|data|document|search_results?|"
               r"start_of_turn|end_of_turn|[\w-]*(?:override|system|admin|instructions?)[\w-]*")
_TOOL_WORDS = (r"tool|tools|tool_calls?|tool_use|tool_result|tool_code|function_calls?|function_results?|"
               r"invoke|[\w:-]*(?:function_calls|invoke|parameter)|antml_\w+|"
               r"parameter|function|antml:[\w:-]+|execute_\w+|run_\w+|bash|shell|computer|code_interpreter|"
               r"python_exec|browser")
# Role and tool tags, opening or closing, with or without attributes.
_ROLE_TAG = re.compile(rf"</?\s*(?:{_ROLE_WORDS}|{_TOOL_WORDS})(?:[\s=][^<>]{{0,300}})?/?>", re.IGNORECASE)
# Banners that pose as a system section: "BEGIN SYSTEM PROMPT", "--- SYSTEM NOTICE ---",
# "[[SYSTEM]]", "%%% SYSTEM %%%", "[SYSTEM PROMPT UPDATE]".
_BANNER = re.compile(
    # Decoration before the word is looked behind for (two marks, or one bracket, then at
    # most two spaces), so a long run of marks is not re-read from every position.
    r"(?:(?<=[\[\]{}<>=~%*#|-]{2})|(?<=[\[\]{}<>=~%*#|-]{2}[ \t])|(?<=[\[\]{}<>=~%*#|-]{2}[ \t]{2})"
    r"|(?<=\[)|(?<=\[[ \t]))/?(?P<a>system)\b"
    r"|\b(?:BEGIN|END|START)[ \t]+(?P<b>SYSTEM)\b"
    r"|(?-i:\b(?P<c>SYSTEM)[ \t]+(?:PROMPT|NOTICE|MESSAGE|UPDATE|OVERRIDE|INSTRUCTIONS?|ALERT|COMMAND)\b)",
    re.IGNORECASE)
_COMMENT = re.compile(r"<!--|-->")
_REACT = re.compile(r"^(?P<lead>[ \t]*)(?P<label>Thought|Action|Action Input|Observation|Tool|Tool Input|"
                    r"Args|"
                    r"Arguments|Function)(?P<tail>[ \t]*:)", re.MULTILINE)
_REACT_PAIR = re.compile(r"^[ \t]*(?:Action Input|Args|Arguments|Tool Input)[ \t]*:", re.MULTILINE)
_CALL_TOOL = re.compile(r"(?P<lead>\b(?:calling|call|invoke|invoking|running)\s+(?:the\s+)?)tool\b"
                        r"(?P<rest>\s*[`'\"]?[\w.-]+[`'\"]?\s+with\b[^\n]*)", re.IGNORECASE)
# A message in a chat API's shape with real content is a fake turn; a schema example
# ({"role": "developer", "content": "..."}) is not.
_JSON_ROLE = re.compile(r"\"role\"\s*:\s*\"(?P<role>system|assistant|developer)\"\s*,"
                        r"\s*\"content\"\s*:\s*\"[^\"]{12}",
                        re.IGNORECASE)
_CALL_VERB = re.compile(
    r"\b(?P<verb>call|invoke|run|execute)\s+(?P<fn>[a-z_][\w.]*_[\w.]*)\((?=[^)\n]{0,200}\))")
_CALL_SYNTAX = re.compile(r"\b(?P<ns>functions|default_api|tools|multi_tool_use)\.(?=\w+\s*\()")
_ROLE_HEADING = re.compile(
    r"^(?P<lead>[ \t>*_-]*(?:#{1,6}[ \t]*)?\**\[?)"
    r"(?P<role>system|assistant|developer|human|user|ai|instruction|"
    r"response|input)"
    r"(?P<tail>\]?\**[ \t]*(?:\(\w+\))?[ \t]*(?:message|prompt|notice|note|update|override|instructions?)?"
    r"[ \t]*:)",
    re.IGNORECASE | re.MULTILINE)
# Only headings, or the system/assistant/developer label, count at the start of a line:
# "User: alice" in a log is ordinary.
_STRONG_ROLES = frozenset({"system", "assistant", "developer"})
# Shouted or after a closing tag, a role label is one anywhere in a line.
_ROLE_INLINE = re.compile(r"(?:(?<![\w-])(?P<shout>SYSTEM|ASSISTANT|DEVELOPER)"
                          r"|(?<=[›>\]|}]) ?(?P<role>system|"
                          r"assistant|developer|user|human))(?P<tail>[ \t]*:)", re.IGNORECASE)
_HTML_FETCH = re.compile(r"<\s*(?:img|image|script|iframe|object|embed|link|meta|svg|video|audio|source|form|"
                         r"input|base|style)\b[^<>]{0,500}>", re.IGNORECASE)
_HTML_ANCHOR = re.compile(r"<\s*a\s[^<>]*href\s*=\s*[\"']?(?P<url>[^\"'\s>]+)[^<>]*>", re.IGNORECASE)
# An address may hold one level of parentheses (Wikipedia) and bracketed placeholders; a bare
# "(" ends it, so a run of "![a](" is not re-read from every position.
_TARGET = (r"\(\s*<?(?P<url>(?:[^()\s>\[]|\([^()\s]{0,100}\)|\[[^\]\n]{0,200}\]){0,2000})>?"
           r"(?:\s+\"[^\"\n]*\")?\s*\)")
_MD_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]{0,300})\]" + _TARGET)
_MD_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]{0,300})\]" + _TARGET)
_MD_REF_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]{0,300})\]\[(?P<ref>[^\]\n]{0,100})\]")
_MD_REF_DEF = re.compile(r"^(?P<lead>[ \t]{0,3}\[[^\]\n]{1,100}\]:[ \t]*)<?(?P<url>\S{1,2000}?)>?(?=[ \t]|$)",
                         re.MULTILINE)
_AUTOLINK = re.compile(r"<(?P<url>(?:https?:)?//[^\s<>]{3,2000})>", re.IGNORECASE)
_BARE_URL = re.compile(r"(?<![\w/(\[<\"'=])(?:https?:)?//[^\s<>()\[\]\"'`]{3,2000}", re.IGNORECASE)
_TEMPLATE = re.compile(r"\{[^{}]{0,100}\}|\{\{|\$\{?[A-Za-z_]\w*|%7[Bb]|%24|%s\b|<[^<>]{1,60}>|"
                       r"\[[A-Z_]{3,}\]|=$|"
                       r"\b(?:SECRET|TOKEN|PASSWORD|API_KEY|DATA|CONVERSATION|HISTORY|CHAT)\b")
_JSON_CALL_KEYS = re.compile(
    r"\"(?:tool_calls|function_call|tool_use|functionCall|tool_code|recipient_name|tool_name)\"\s*:"
    r"|\"type\"\s*:\s*\"(?:function|tool_use|tool_call)\"")
_JSON_NAME = re.compile(r"\"(?:name|tool|function|action|command)\"\s*:\s*\"")
_JSON_ARGS = re.compile(r"\"(?:arguments|parameters|input|args|action_input|params|kwargs)\"\s*:")


def _remote(url: str) -> bool:
    lowered = url.strip().lower()
    return lowered.startswith(("http://", "https://", "//", "ftp://", "ws://", "wss://"))


def _carries(url: str) -> bool:
    """True when the address can carry data out: a query string, or a template in it."""
    if "?" in url or _TEMPLATE.search(url):
        return True
    fragment = url.partition("#")[2]
    return "=" in fragment or "&" in fragment


def plain(url: str) -> str:
    """The host and path of a remote address, without query, fragment or credentials."""
    try:
        parts = urlsplit(url if "//" in url else "//" + url)
        host = parts.hostname or ""
    except ValueError:
        return "an address"
    path = _TEMPLATE.sub("…", parts.path).rstrip("/")
    return f"{host}{path}" or "an address"


def _look_alike(text: str) -> str:
    return (text.replace("<", "‹").replace(">", "›").replace("[", "⟦").replace("]", "⟧")
            .replace("|", "¦"))


def _json_spans(text: str) -> list[tuple[int, int]]:
    """Spans of JSON-looking objects (outermost balanced braces; an object left open runs to
    the end) that read as a tool call. One pass over the text, whatever its braces."""
    spans: list[tuple[int, int]] = []
    if "{" not in text:
        return spans
    depth, start = 0, -1
    in_string = escaped = False
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"' or char == "\n":
                in_string = False
        elif char == '"' and depth:
            in_string = True
        elif char == "{":
            if depth == 0:
                start = position
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, position + 1))
    if depth:
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if _JSON_CALL_KEYS.search(text, a, b)
            or (_JSON_NAME.search(text, a, b) and _JSON_ARGS.search(text, a, b))]


def neutralise(text: str, *, structure_only: bool = False) -> tuple[str, list[str]]:
    """`text` (prose, not code) with its structural and data-carrying markup made inert;
    the findings name what was found. `structure_only` (a comment in code) leaves HTML,
    images and links as written and only quotes what poses as a prompt's structure."""
    findings: set[str] = set()

    def note(kind: str, replacement: str) -> str:
        findings.add(kind)
        return replacement

    # Tool calls as JSON first, while the braces are still there to match.
    spans = _json_spans(text)
    for start, end in reversed(spans):
        findings.add("tool_call")
        body = text[start:end]
        if _BARE_URL.search(body):  # a call that names a remote address would send data there
            findings.add("exfil_link")
            body = _BARE_URL.sub(
                lambda m: f"⟦link: {plain(m.group())}⟧" if _remote(m.group()) else m.group(), body)
        text = text[:start] + body.replace("{", "⦃").replace("}", "⦄") + text[end:]
    text = _CALL_SYNTAX.sub(lambda m: note("tool_call", m.group("ns") + "·"), text)
    text = _CALL_VERB.sub(lambda m: note("tool_call", f"{m.group('verb')} ⟦{m.group('fn')}⟧("), text)

    def react(match: re.Match[str]) -> str:
        return note("tool_call", f"{match.group('lead')}⟦{match.group('label')}⟧{match.group('tail')}")

    def call_tool(match: re.Match[str]) -> str:
        rest = match.group("rest").replace("{", "⦃").replace("}", "⦄")
        return note("tool_call", f"{match.group('lead')}⟦tool⟧{rest}")

    def json_role(match: re.Match[str]) -> str:
        role = match.group("role")
        return note("chat_template", match.group().replace(role, f"⟦{role}⟧"))

    text = _CALL_TOOL.sub(call_tool, text)
    text = _JSON_ROLE.sub(json_role, text)
    if _REACT_PAIR.search(text):
        text = _REACT.sub(react, text)
    text = _SPECIAL_TOKEN.sub(lambda m: note("chat_template", _look_alike(m.group())), text)
    text = _LLAMA.sub(lambda m: note("chat_template", _look_alike(m.group())), text)

    def role_tag(match: re.Match[str]) -> str:
        name = re.split(r"[\s/>]", match.group().lstrip("</ \t"), maxsplit=1)[0].lower()
        kind = "role_marker" if re.fullmatch(_ROLE_WORDS, name) else "tool_call"
        return note(kind, _look_alike(match.group()))

    text = _ROLE_TAG.sub(role_tag, text)

    def heading(match: re.Match[str]) -> str:
        lead = match.group("lead")
        role = match.group("role").lower()
        if role in ("instruction", "response", "input") and "#" not in lead:
            return match.group()  # "Input: a CSV file" is ordinary; "### Input:" is Alpaca's
        if role not in _STRONG_ROLES and "#" not in lead and "[" not in lead:
            return match.group()
        return note("role_marker", f"{lead.replace('[', '')}⟦{match.group('role')}⟧"
                                   f"{match.group('tail').replace(']', '')}")

    text = _ROLE_HEADING.sub(heading, text)

    def banner(match: re.Match[str]) -> str:
        word = match.group("a") or match.group("b") or match.group("c")
        before = match.string[max(0, match.start() - 3):match.start()].strip()
        if match.group("a") and not (word.isupper() or before[-1:] in ("[", "<", "{")):
            return match.group()
        return note("role_marker", match.group().replace(word, f"⟦{word}⟧", 1))

    text = _BANNER.sub(banner, text)
    if structure_only:
        return text, sorted(findings)
    text = _COMMENT.sub(lambda m: note("html", _look_alike(m.group())), text)
    if "tool_call" in findings:
        # A call written as tool markup would send its arguments to the addresses it names.
        text = _BARE_URL.sub(lambda m: note("exfil_link", f"⟦link: {plain(m.group())}⟧") if _remote(m.group())
                             else m.group(), text)

    def inline_role(match: re.Match[str]) -> str:
        shout = match.group("shout")
        if shout is not None and not shout.isupper():
            return match.group()
        return note("role_marker", match.group().replace(shout or match.group("role"),
                                                         f"⟦{shout or match.group('role')}⟧", 1))

    text = _ROLE_INLINE.sub(inline_role, text)
    text = _HTML_FETCH.sub(lambda m: note("html", _look_alike(m.group())), text)

    def anchor(match: re.Match[str]) -> str:
        if _remote(match.group("url")) and _carries(match.group("url")):
            return note("exfil_link", _look_alike(match.group()))
        return match.group()

    text = _HTML_ANCHOR.sub(anchor, text)

    def image(match: re.Match[str]) -> str:
        url = match.group("url")
        if not _remote(url):
            return match.group()
        return note("exfil_image", f"⟦image: {match.group('alt').strip() or 'untitled'} · {plain(url)}⟧")

    text = _MD_IMAGE.sub(image, text)

    def link(match: re.Match[str]) -> str:
        url = match.group("url")
        if not (_remote(url) and _carries(url)):
            return match.group()
        return note("exfil_link", f"{match.group('text')} ⟦link: {plain(url)}⟧")

    text = _MD_LINK.sub(link, text)
    definitions = {m.group(0) for m in _MD_REF_DEF.finditer(text)}

    def reference(match: re.Match[str]) -> str:
        url = match.group("url")
        if not (_remote(url) and (_carries(url) or _MD_REF_IMAGE.search(text))):
            return match.group()
        return note("exfil_link", f"{match.group('lead')}⟦link: {plain(url)}⟧")

    if definitions:
        text = _MD_REF_DEF.sub(reference, text)

    def bare(match: re.Match[str]) -> str:
        url = match.group()
        follows = text[match.end():match.end() + 1]
        if follows == "<" and "?" in url and url.endswith("="):
            return note("exfil_link", f"⟦link: {plain(url)}⟧")
        if not _TEMPLATE.search(url.partition("?")[2] + url.partition("#")[2]) \
                and not _TEMPLATE.search(url.split("/", 3)[-1] if url.count("/") >= 3 else ""):
            return url
        return note("exfil_link", f"⟦link: {plain(url)}⟧")

    text = _BARE_URL.sub(bare, text)

    def autolink(match: re.Match[str]) -> str:
        if not _carries(match.group("url")):
            return match.group()
        return note("exfil_link", f"⟦link: {plain(match.group('url'))}⟧")

    text = _AUTOLINK.sub(autolink, text)
    return text, sorted(findings)
