"""What a text names: people, projects, files, libraries and other proper names (pure text).

Read by rules, not a model (nothing may download one here), and tuned for what memories
hold: conversation turns ("Yara: my little sister Nia adopted a parrot"), facts about
people, and project knowledge ("pin `psycopg` in requirements/base.txt"). A name is taken
when the text marks it as one:

- a file by its extension or path (`samsite/settings.py`, `Dockerfile`);
- a library by how it is installed or imported (`pip install django-q2`, `from numpy import`,
  `require('express')`) or called ("the requests library", "the pgvector extension");
- a project by "project X", "the X project/repo/service";
- a person by a speaker's prefix ("Yara: …"), a relation ("my sister Nia", "her friend
  Tom"), a greeting ("Thanks, Amara!"), a handle (@nia) or a verb of speech ("Tom said");
- any other run of capitalised words inside a sentence ("we met at Hacker News") is a name
  of no known kind. A capitalised word opening a sentence is one only when the text also
  writes it capitalised elsewhere, or a rule above takes it: "Sorry" and "Tomorrow" are not.

Each name is keyed by `normalise` (case, spacing and a possessive "'s" do not matter), so
"Nia's" and "nia" are one entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import PROPER_NAME, PROPER_NAME_WORD

PERSON, PROJECT, FILE, LIBRARY, NAME = "person", "project", "file", "library", "name"
# A name of no known kind gives way to a kind a later mention shows.
KIND_RANK = {NAME: 0, PROJECT: 1, LIBRARY: 1, FILE: 1, PERSON: 1}
MAX_PER_TEXT = 24
# A memory's text is at most 8,000 characters; anything longer is read this far only.
MAX_TEXT = 20_000
MAX_NAME_LENGTH = 120

_EXTENSIONS = (
    "py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|vue|svelte|go|rs|java|kt|kts|scala|rb|php|cs|cpp|cc|cxx|hpp|hh|c|h|"
    "swift|m|dart|lua|r|jl|ex|exs|erl|clj|hs|ml|sql|md|rst|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|"
    "lock|html|htm|css|scss|sass|less|sh|bash|zsh|ps1|bat|tf|proto|gradle|xml|csv|graphql|gql|prisma"
)
_FILE = re.compile(
    rf"(?<![\w@/.:-])((?:\.{{0,2}}/)?(?:[\w.-]{{1,80}}/){{0,12}}[\w-][\w.-]{{0,80}}\.(?:{_EXTENSIONS}))(?![\w/-])|"
    r"(?<![\w/.-])((?:[\w.-]{1,80}/){0,12}(?:Dockerfile|Makefile|Procfile|Gemfile|Justfile|Vagrantfile))\b",
    re.IGNORECASE,
)
_PACKAGE = r"@?[a-z0-9][\w.-]{0,80}(?:/[\w.-]{1,80})?"
# A package as installed: a flag or a name, with extras and a version ("django-q2[redis]>=1.7").
_INSTALLED = r"(?:-{1,2}[\w=-]{1,40}|" + _PACKAGE + r")(?:\[[\w,]{1,80}\])?(?:[=<>~!]=?[\w.*]{1,40})?"
_INSTALL = re.compile(
    r"\b(?:pip3?|uv pip|uv|poetry|pipx|conda|npm|pnpm|yarn|bun|cargo|gem|go|composer|brew|dotnet)\s+"
    r"(?:install|add|get|i)\s+(" + _INSTALLED + r"(?:[ \t]+" + _INSTALLED + r"){0,11})",
    re.IGNORECASE,
)
_PY_IMPORT = re.compile(r"^\s*(?:from\s+([a-zA-Z_][\w]*)[\w.]*\s+import\b|import\s+([a-zA-Z_][\w]*))",
                        re.MULTILINE)
_JS_IMPORT = re.compile(r"""(?:require\(\s*|\bfrom\s+|\bimport\s+)['"]([@a-z0-9][\w@/.-]*)['"]""")
_CALLED_LIBRARY = re.compile(
    r"\b([A-Za-z][\w.+-]{0,60}[\w+])\s+(?:library|package|framework|crate|gem|module|sdk|plugin|extension)\b")
_PROJECT = re.compile(
    r"\b(?:project|repo|repository|codebase)\s+(?:called\s+|named\s+)?([A-Z][\w-]{1,60}|[a-z0-9]{1,40}"
    r"(?:-[a-z0-9]{1,40}){1,6})|"
    r"\bthe\s+([A-Z][\w-]{1,60}(?:\s[A-Z][\w-]{1,60})?|[a-z0-9]{1,40}(?:-[a-z0-9]{1,40}){1,6})\s+"
    r"(?:project|repo|repository|codebase"
    r"|service|app)\b")
_SPEAKER = re.compile(rf"^[ \t]*({PROPER_NAME_WORD}(?: {PROPER_NAME_WORD})?)[ \t]*:\s", re.MULTILINE)
_RELATION = re.compile(
    r"\b(?:my|our|his|her|their|your|[A-Z][a-z]+'s)\s+(?:(?:little|big|older|younger|best|old|new|"
    r"twin|baby|step|late|good|close)\s+)?(?:friend|sister|brother|sis|bro|mother|mom|mum|dad|father|"
    r"son|daughter|wife|husband|partner|boss|manager|colleague|coworker|co-worker|cousin|aunt|uncle|"
    r"neighbou?r|roommate|flatmate|housemate|teammate|mentor|grandma|grandmother|grandpa|grandfather|"
    r"girlfriend|boyfriend|fianc[eé]e?|niece|nephew|kid|child|coach|teacher|doctor|therapist|lead)s?"
    rf"\s*,?\s+({PROPER_NAME})")
_GREETING = re.compile(
    rf"\b(?:[Hh]i|[Hh]ey|[Hh]ello|[Tt]hanks|[Tt]hank you|[Bb]ye|[Cc]ongrats|[Cc]ongratulations|[Ss]orry|"
    rf"[Gg]ood (?:morning|night|luck)|[Mm]orning|[Ss]ee you|[Tt]alk soon|[Mm]iss you|[Nn]o problem|"
    rf"[Nn]o worries|[Yy]ou too|[Oo]f course),?\s+({PROPER_NAME_WORD})\b|,\s+({PROPER_NAME_WORD})\s*!")
_SPEECH = re.compile(
    rf"\b({PROPER_NAME})\s+(?:said|says|told|tells|asked|asks|recommended|recommends|suggested|suggests|"
    r"mentioned|thinks|thought|wants|wanted|loves|loved|hates|is my|was my)\b")
_HANDLE = re.compile(r"(?<![\w.])@([A-Za-z][\w-]{1,38})\b(?![./])")
_RUN = re.compile(rf"\b{PROPER_NAME}\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;\n]\s*|[\"“(]\s*)$")

# Capitalised for grammar, not because they are names (and never a name on their own).
NOT_NAMES = frozenset("""
i i'm i've i'll i'd im ive ok okay yes yeah yep no nope nah hey hi hello thanks thank bye sorry oh wow lol
haha hahaha omg please sure well so but and or the a an this that these those it its there here then now
today tonight tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january
february march april may june july august september october november december mon tue wed thu fri sat sun
jan feb mar apr jun jul aug sep sept oct nov dec what when where why how who which whose did do does is
are was were will would can could should shall might must have has had my your our their his her we you
they he she me us them also just still maybe perhaps anyway actually honestly great good nice cool awesome
amazing congrats congratulations love miss sounds sound totally definitely absolutely exactly agreed true
right not never always sometimes usually often let lets let's after before since until while if as at in
on of for to from with by about into over under between during without within note tip warning todo
fixme fix bug error use using run see add remove update make set get all some any every each most many
much more less few other another same such own only both either
neither none nothing something everything anything someone everyone anyone nobody morning afternoon
evening night christmas easter because although though however therefore thus hence instead otherwise
meanwhile next then finally first second third last later earlier also even just only once since unless
whereas whether yet done
true false null nil undefined nan
mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends
""".split())


# "Fixed: …", "User: …": a label or a role opens the line, not a speaker.
_LABELS = frozenset("""
fixed fix note notes update problem solution decision context summary result results cause reason answer
question goal status example usage warning error tip todo important rule user assistant system human ai bot
reasoning thought thoughts conclusion decided decisions
model q a pros cons why how step steps outcome lesson takeaway symptom symptoms workaround issue bug output
input command commands code file files path config setup install test tests edit done open closed source
""".split())
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "sir", "dame", "st"})
_TITLE_DOT = re.compile(r"\b(Dr|Mr|Mrs|Ms|Mx|Prof|St)\.\s")
# Words after which `pip install a b` lists no more packages.
_END_OF_PACKAGES = frozenset({"and", "then", "to", "in", "for", "with", "or", "on", "first", "again", "it",
                              "the", "a", "an", "if", "but", "so", "&&", "||", ";", "|"})

# Words that describe a library rather than name it ("a third-party package").
_GENERIC = frozenset("""
standard third-party external internal core client server new old official open-source whole same own other
popular great small tiny custom utility helper main test testing python node javascript typescript js
shared common base local remote private public separate single entire native default built-in builtin
vendored forked patched legacy latest older newer stable
""".split())


@dataclass(frozen=True)
class Mention:
    kind: str
    name: str

    @property
    def key(self) -> str:
        return normalise(self.name)


def normalise(name: str) -> str:
    """The form names are matched by: lower case, single spaces, no possessive or edge punctuation."""
    text = re.sub(r"\s+", " ", name.strip()).casefold()
    text = re.sub(r"['’]s$", "", text)
    return text.strip(" .,;:!?\"'“”‘’()[]{}<>`*_")


def _package(token: str) -> str:
    """`django-q2[redis]>=1.7` -> `django-q2`; `@scope/pkg@2` -> `@scope/pkg`; flags -> ''."""
    if token.startswith("-"):
        return ""
    name = re.split(r"[\[=<>~!]", token, maxsplit=1)[0]
    if name.startswith("@"):
        scope, _, rest = name.partition("/")
        return f"{scope}/{rest.split('@')[0]}" if rest else ""
    return name.split("@")[0].rstrip(".")


def _is_name(text: str) -> bool:
    """Not a capitalised common word: its last word (the head of "New York", "Tom") is no
    function word, weekday or interjection."""
    words = normalise(text).split()
    acronym = text.split()[-1].isupper()
    return bool(words) and (acronym or words[-1] not in NOT_NAMES) and words[0] not in _TITLES


_ACRONYM_BEFORE = re.compile(r"(?<![\w.])([A-Z]{2,5}) $")
# Type parameters and generics: `Sync<Date>`, `List<Order>` are code, not names.
_CODE_BEFORE, _CODE_AFTER = frozenset("<_."), frozenset("<>_(")


def _in_code(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return before in _CODE_BEFORE or after in _CODE_AFTER


def _starts_sentence(text: str, position: int) -> bool:
    return bool(_SENTENCE_START.search(text[max(0, position - 3):position])) or position == 0


@dataclass(frozen=True)
class Reading:
    # What the text names, each once (by its key), in order of first mention.
    mentions: list[Mention]
    # Capitalised runs opening a sentence that `mentions` did not take ("Nia adopted a
    # parrot."): names if the space already knows them (memories.entities.linking checks).
    openings: list[str]


def mentions(text: str) -> list[Mention]:
    """The entities `text` names, each once (by its key), in order of first mention; at most
    MAX_PER_TEXT."""
    return read(text).mentions


def read(text: str) -> Reading:
    """`text` read once for names (its first MAX_TEXT characters)."""
    text = text[:MAX_TEXT]
    found: dict[str, Mention] = {}

    def add(kind: str, name: str) -> None:
        name = name.strip().rstrip(".,;:")
        name = re.sub(r"['’]s$", "", name)
        key = normalise(name)
        if len(key) < 2 or len(key) > MAX_NAME_LENGTH:
            return
        known = found.get(key)
        if known is None or KIND_RANK[kind] > KIND_RANK[known.kind]:
            found[key] = Mention(kind, name if known is None else known.name)

    # Code and paths first: their dots and slashes must not be read as sentence ends.
    for match in _FILE.finditer(text):
        add(FILE, match.group(1) or match.group(2))
    for match in _INSTALL.finditer(text):
        for token in match.group(1).split()[:8]:
            if token.casefold() in _END_OF_PACKAGES or token.casefold() in NOT_NAMES:
                break
            package = _package(token)
            if package:
                add(LIBRARY, package)
    for match in _PY_IMPORT.finditer(text):
        add(LIBRARY, match.group(1) or match.group(2))
    for match in _JS_IMPORT.finditer(text):
        parts = match.group(1).split("/")
        # `@scope/pkg/sub` is `@scope/pkg`; `lodash/fp` is `lodash`.
        add(LIBRARY, "/".join(parts[:2]) if parts[0].startswith("@") else parts[0])
    for match in _CALLED_LIBRARY.finditer(text):
        word = match.group(1)
        if word.casefold() not in NOT_NAMES | _GENERIC:
            add(LIBRARY, word)
    for match in _PROJECT.finditer(text):
        name = match.group(1) or match.group(2)
        if _is_name(name):
            add(PROJECT, name)

    speakers = [m.group(1) for m in _SPEAKER.finditer(text) if normalise(m.group(1)) not in _LABELS]
    people = [next(g for g in m.groups() if g) for pattern in (_RELATION, _GREETING, _SPEECH)
              for m in pattern.finditer(text)]
    for name in speakers + people:
        if _is_name(name):
            add(PERSON, name)
    for match in _HANDLE.finditer(text):
        add(PERSON, "@" + match.group(1))

    # Other capitalised runs: inside a sentence they are names; opening one only when the
    # text capitalises them elsewhere too (or a rule above already took them). A title's
    # dot ends no sentence ("Dr. Ana Lopez").
    plain = _TITLE_DOT.sub(lambda m: m.group(1) + "  ", text)
    runs = []
    for match in _RUN.finditer(plain):
        words, start = match.group(0).split(), match.start()
        if _in_code(plain, start, match.end()):
            continue
        # "EF Core", "AWS Lambda": an acronym before the run is part of the name.
        acronym = _ACRONYM_BEFORE.search(plain, max(0, start - 7), start)
        if acronym:
            words, start = [acronym.group(1), *words], acronym.start(1)
        opening = _starts_sentence(plain, start)
        # "Tomorrow Tom …", "Dr Ana Lopez": the first word is not part of the name.
        while words and (normalise(words[0]) in _TITLES or (opening and normalise(words[0]) in NOT_NAMES)):
            words, opening = words[1:], False
        if words:
            runs.append((" ".join(words), opening))
    inside = {normalise(run) for run, opening in runs if not opening}
    openings: dict[str, str] = {}
    for run, opening in runs:
        key = normalise(run)
        if key in found or not _is_name(run):
            continue
        if opening and key not in inside:
            openings.setdefault(key, run)
        else:
            add(NAME, run)
    return Reading(list(found.values())[:MAX_PER_TEXT], list(openings.values()))
