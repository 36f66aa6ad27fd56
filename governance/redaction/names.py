"""Full names of people, without a statistical model.

A name is a run of capitalised words ("Maria Gonzalez", "Jan de Vries", "Robert J. Kowalski")
that is vouched for by one of:
- a title before it ("Dr. Okonkwo", "Frau Katharina Vogel"): one word is enough;
- a cue before it ("my name is", "contact", "ask", "from", "Reviewed-by:", "Owner:"), a signature
  position (the line after "Thanks,"), or an email in angle brackets after it: two words;
- the words themselves: a known first name followed by a surname-like word, an unknown word
  followed by a known surname, or three or more known name words ending with a surname.
Words that are tech or product names ("Django", "Redis Cluster", "Visual Studio"), common words
in six languages, CamelCase identifiers and anything in backticks end a run, so "Ray Serve" and
"Jenkins Pipeline" survive. A lone first name is not a full name and survives ("ask Anna").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.text import capitalised_word_of

from . import name_lexicon as lexicon
from . import public_names
from .findings import Candidate
from .scan import Scan

PRIORITY = 50
MAX_NAME_WORDS = 4

# Only capitalised words and lowercase particles can be part of a name; skipping every other word
# in the regex rather than in Python makes this recognizer ~3x faster.
_UPPER = "".join(ch for ch in map(chr, range(0x250)) if ch.isupper()) + "".join(
    ch for ch in map(chr, range(0x370, 0x530)) if ch.isupper()
)
_WORD = re.compile(
    rf"(?<![\w'’-])(?:{capitalised_word_of(re.escape(_UPPER))}\.?"
    rf"|(?:{'|'.join(sorted(lexicon.PARTICLES, key=len, reverse=True))})(?![\w'’-]))"
)
# Mc/Mac/O'/De-style inner capitals are names; other inner capitals are CamelCase identifiers.
_NAME_PART = re.compile(r"[^\W\d_][^\W\d_A-ZÀ-ÖØ-Þ]*|(?:Mc|Mac|De|Di|Da|La|Le|Fitz)[A-Z][^\W\d_A-Z]+")
_CUE = re.compile(
    r"(?:\bmy name is|\bmy name's|\bi'm|\bi am|\bthis is|\bcall me|\bcontact|\bask|\bping|\bpinged|\bcc|"
    r"\bthanks(?: to)?|\bthank you|\bfrom|\bby|\bwith|\bdear|\bhi|\bhello|\bhey|\bmeet|\bmet|\bper|"
    r"\bassigned to|\btalked to|\bspoke (?:to|with)|\bhandover (?:from|to)|\bemail|\bcall|"
    r"\b(?:name|owner|author|assignee|reviewer|reporter|backup|buddy|customer|client|patient|patient name|"
    r"attendees|participants|manager|lead|contact|from|to|cc|signed|[a-z]+-by)\s*:)"
    r"\s*$",
    re.IGNORECASE,
)
_SELF_INTRODUCTION = re.compile(r"(?:\bmy name is|\bi'm|\bi am|\bcall me)\s*$", re.IGNORECASE)
_SIGN_OFF = re.compile(
    r"(?:thanks|thank you|regards|best|cheers|sincerely|yours|viele grüße|grüße|cordialement|saludos|"
    r"un saluto|groeten|best regards|kind regards)[,!.]?\s*$",
    re.IGNORECASE,
)
_SIGNATURE_DASH = re.compile(r"^\s*(?:-|–|—|--)\s*$")
_EVERYDAY_ENDINGS = ("tion", "sion", "ment", "ness", "ical", "able", "ible", "ous", "ive", "ize", "ise",
                     "ity", "ship", "ware", "less", "ful", "ing")
_TITLES_WITHOUT_DOT = frozenset({"herr", "frau", "sir", "dame", "madame", "monsieur"})
_NEVER_IN_NAMES = lexicon.TECH_WORDS | lexicon.NEVER_NAME_WORDS
_EMAIL_AFTER = re.compile(r"\s*<[^<>\s@]+@[^<>\s]+>")
# "the", "a", "our" … right before a capitalised phrase: English puts none before a person's name.
_DETERMINER_BEFORE = re.compile(r"(?<![\w'’])(?:the|a|an|my|our|your|their|this|that|these|those)[ \t]+$",
                                re.IGNORECASE)
_PREVIOUS_WORD = re.compile(r"(?<![\w'’-])([^\W\d_]+)[ \t]+$")
# A band's or a boat's name right after the noun ("my band Velvet Static", "the yacht Sea Breeze"),
# and a place's after "called" or "named" ("a pub called Mary Rose"). Other nouns stay out: "the team
# Anna Weber leads" names a person.
_GROUP_NOUN_BEFORE = re.compile(
    r"(?<![\w'’-])(?:(?:band|bands|choir|orchestra|duo|trio|quartet|boat|yacht|ship)[ \t]+"
    r"(?:(?:called|named)[ \t]+)?|(?:pub|bar|restaurant|café|cafe|hotel|venue|club|shop|bakery|brewery|"
    r"winery|cottage|farm|house|village|town|street)[ \t]+(?:called|named)[ \t]+)$",
    re.IGNORECASE,
)
# Tech words that are also everyday verbs say nothing about what follows ("Make Anna Weber owner").
_BRANDS = (lexicon.TECH_WORDS | lexicon.MAKERS) - frozenset(
    "make run serve route render fetch express apply remix cluster pipeline actions functions cloud "
    "edge next black code visual studio solid foundation instant material segment square stitch "
    "census relay glue beam storm arrow spring salt chef puppet vault consul nomad".split())
# Lowercase nouns that follow the name of a work, a star or a breed, not of a private person.
# Plurals that are also verbs ("Maria Gonzalez books the room", "shows the demo") count only when
# no object follows them ("Harry Potter books are …", "… jokes, again").
_WORK_NOUN_AFTER = re.compile(
    r"(?:['’]s)?[ \t]+(?:"
    r"(?:book|novel|series|film|movie|movies|trilogy|franchise|saga|universe|album|albums|song|songs|"
    r"single|track|lyrics|concert|concerts|tour|ticket|tickets|show|episode|episodes|season|fans|"
    r"soundtrack|musical|fan|fandom|cosplay|costume|costumes|poster|posters|merch|meme|memes|joke|"
    r"quote|biography|documentary|biopic|playlist|podcast|game|marathon|puppy|puppies|dog|breed|"
    r"cat|kitten|methodology|method|principle|principles|framework|approach|handbook|cookbook)\b"
    r"|(?:books|novels|films|tracks|shows|jokes|quotes|games|dogs|cats|tours|seasons|singles)\b"
    r"(?=[ \t]*(?:[.,;:!?)]|$|(?:are|were|is|was|and|or|on|in|at|from|of|for|by|with|that)\b)))",
    re.MULTILINE,
)


@dataclass
class _Word:
    text: str  # without a trailing possessive or full stop
    start: int
    end: int
    kind: str  # "name" (a capitalised word, maybe part of a name) | "particle" | "initial" | "title" | "stop"
    first: bool = False  # a known first name that is not also an everyday word
    weak_first: bool = False  # a known first name that is also an everyday word ("Will", "Grace")
    last: bool = False  # a known surname
    common: bool = False  # an everyday word in one of six languages and no known name

    @property
    def unknown(self) -> bool:
        return not (self.first or self.weak_first or self.last or self.common)


def find(scan: Scan) -> Iterator[Candidate]:
    words = list(_words(scan))
    i = 0
    while i < len(words):
        if words[i].kind != "name":
            i += 1
            continue
        titled = i > 0 and words[i - 1].kind == "title" and _adjacent(scan.text, words[i - 1], words[i])
        run = _run_from(scan.text, words, i)
        span = _accept(scan, run, titled=titled)
        if span:
            yield Candidate("name", span[0], span[1], "name", PRIORITY)
            i += len(run)
        else:
            # "Pinged Jonas Lindqvist": the run is no name, but the one starting at its next word may be.
            i += 1


def _words(scan: Scan) -> Iterator[_Word]:
    text = scan.text
    first, last, common = lexicon.first_names(), lexicon.last_names(), lexicon.common_words()
    for match in _WORD.finditer(text):
        raw = match.group()
        start, end = match.span()
        if (scan.code and scan.code.overlaps(start, end)) or (scan.urls and scan.urls.overlaps(start, end)):
            yield _Word(raw, start, end, "stop")
            continue
        word = raw.rstrip(".")
        had_dot = word != raw
        for suffix in ("'s", "’s"):
            if word.endswith(suffix):
                word = word[: -len(suffix)]
        key = word.casefold()
        end = start + len(word)
        if len(word) == 1 and word.isupper() and had_dot:
            yield _Word(word, start, match.end(), "initial")
        elif key in lexicon.TITLES and (had_dot or key in _TITLES_WITHOUT_DOT):
            yield _Word(word, start, end, "title")
        elif key in lexicon.PARTICLES and word.islower():
            yield _Word(word, start, end, "particle")
        elif not _is_capitalised_name_word(word) or key in _NEVER_IN_NAMES:
            yield _Word(word, start, end, "stop")
        else:
            is_first = key in first
            weak = is_first and (key in lexicon.WEAK_FIRST_NAMES or key in common)
            is_last = key in last
            everyday = key in common or _looks_like_an_everyday_word(key, common)
            yield _Word(word, start, end, "name", first=is_first and not weak, weak_first=weak, last=is_last,
                        common=everyday and not is_first and not is_last)


def _looks_like_an_everyday_word(key: str, common: frozenset[str]) -> bool:
    """"Models" (plural of a common word), "Technical", "Deployment": endings that surnames rarely have."""
    if key.endswith("s") and (key[:-1] in common or key[:-2] in common):
        return True
    return key.endswith(_EVERYDAY_ENDINGS)


def _is_capitalised_name_word(word: str) -> bool:
    if len(word) < 2 or not word[0].isupper() or word.isupper():
        return False
    return all(_NAME_PART.fullmatch(part) for part in re.split(r"['’-]", word) if part)


def _adjacent(text: str, left: _Word, right: _Word) -> bool:
    """Separated by spaces only (one line, no punctuation but a title's full stop).

    An initial keeps its full stop inside the word ("J."), so a full stop after any other word
    ends a sentence, and a name never runs across it ("Yeah, Caroline. Totally agree.").
    """
    gap = text[left.end:right.start]
    if "." in gap and left.kind != "title":
        return False
    return 0 < len(gap) <= 3 and gap.strip(" .") == "" and "\n" not in gap and gap.count(".") <= 1


def _run_from(text: str, words: list[_Word], i: int) -> list[_Word]:
    """Name-like words from i on: capitalised words joined by spaces, with particles and initials
    allowed between them (never at the end), cut before the first everyday word after the first."""
    run = [words[i]]
    j = i + 1
    while j < len(words) and sum(w.kind == "name" for w in run) < MAX_NAME_WORDS:
        word = words[j]
        if not _adjacent(text, run[-1], word) or word.kind in ("stop", "title") or word.common:
            break
        run.append(word)
        j += 1
    while run and run[-1].kind in ("particle", "initial"):
        run.pop()
    return run


def _accept(scan: Scan, run: list[_Word], *, titled: bool) -> tuple[int, int] | None:
    if not run:
        return None
    core = [w for w in run if w.kind == "name"]
    span = (run[0].start, run[-1].end)
    if titled:
        return span
    # The public-name checks are the costlier ones, so they only run on a run that is vouched for.
    if _vouched_for(scan, run, core) and not _not_a_private_person(scan, run, core):
        return span
    return None


def _vouched_for(scan: Scan, run: list[_Word], core: list[_Word]) -> bool:
    before = scan.line_before(run[0].start)
    if len(core) == 1:
        return bool(_SELF_INTRODUCTION.search(before)) and core[0].first
    head, second = core[0], core[1]
    if head.common:
        return False
    if _CUE.search(before) or _is_signature(scan, run) or _EMAIL_AFTER.match(scan.text, run[-1].end):
        return True
    if head.first:
        return True
    if len(core) >= 3 and core[-1].last and all(_is_plain_name_word(w) for w in core):
        # "Mei Lin Chen": romanised given names are often listed only as surnames, but three known
        # name words in a row, none of them an everyday word ("Read Martin Weber"), are a name.
        return True
    if second.text.casefold() in lexicon.MONTHS_AND_COUNTRIES and not head.weak_first:
        return False  # "Miete Mai", "Electric Ireland"
    return (head.weak_first or head.unknown) and second.last and len(head.text) >= 3


def _is_plain_name_word(word: _Word) -> bool:
    """A known first name or surname that is not also an everyday word ("Read", "Will", "Page")."""
    return (word.first or word.last) and word.text.casefold() not in lexicon.common_words()


def _not_a_private_person(scan: Scan, run: list[_Word], core: list[_Word]) -> bool:
    """A public figure, a work, a breed or a product rather than somebody's name:

    - two or more of its words, in order, are a phrase of public_names ("Ed Sheeran", "Iron Man");
    - an article or possessive right before it ("the Lean Startup", "our German Shepherd");
    - a noun for a group or a place right before it ("my band Velvet Static", "a pub called Red Lion");
    - a brand right before it ("Adobe Acrobat Reader");
    - a noun right after it that people put after works, stars and breeds ("Harry Potter books",
      "Frank Ocean album", "Border Collie puppy");
    - it starts with a nationality ("German Shepherd", "Siberian Husky") or ends with a breed word
      ("Golden Retriever", "Yorkshire Terrier").
    """
    keys = [w.text.casefold() for w in run]
    for size in range(2, min(len(keys), public_names.MAX_WORDS) + 1):
        if any(" ".join(keys[i:i + size]) in public_names.PHRASES for i in range(len(keys) - size + 1)):
            return True
    before = scan.line_before(run[0].start, 40)
    if _DETERMINER_BEFORE.search(before):
        return True
    # Unless its words are a known first name and a known surname ("the band Anna Weber founded").
    if _GROUP_NOUN_BEFORE.search(before) and not (core[0].first and core[-1].last):
        return True
    previous = _PREVIOUS_WORD.search(before)
    if previous and previous.group(1)[0].isupper() and previous.group(1).casefold() in _BRANDS:
        return True
    if _WORK_NOUN_AFTER.match(scan.text, run[-1].end):
        return True
    return core[0].text.casefold() in lexicon.DEMONYMS or core[-1].text.casefold() in lexicon.BREED_WORDS


def _is_signature(scan: Scan, run: list[_Word]) -> bool:
    """The run starts its line and either follows a sign-off line or a dash ("- Kevin McAllister")."""
    text = scan.text
    before = scan.line_before(run[0].start)
    if _SIGNATURE_DASH.match(before):
        return True
    if before.strip():
        return False
    line_start = run[0].start - len(before)
    previous_line_end = line_start - 1
    if previous_line_end < 0:
        return False
    previous_line = text[text.rfind("\n", 0, previous_line_end) + 1:previous_line_end]
    return bool(_SIGN_OFF.search(previous_line))
