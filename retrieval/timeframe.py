"""When a question asks about: dates and relative expressions in the query, as a time window.

"What did Andrew do on the Monday before July 24, 2023?" is about one day, and no memory
holds the words "Monday", "July" or "2023": the turn that answers it was said that day. So
recall reads the window out of the question, looks for memories said in it (the time
channel) and gives those near it a signal, and the words that named the window leave the
text that is matched and embedded.

Handled (English, case-insensitive; relative to the request's `as_of`, else now):

- a day: `2023-07-24`, `24 July 2023`, `24th of July, 2023`, `July 24, 2023`, `Jul 24th`,
  `yesterday`, `today`, `last Monday`, `3 days ago`;
- a week: `last week`, `this week`, `2 weeks ago`;
- a month: `May 2023`, `in May`, `last month`, `this month`, `early May 2023` (days 1-10);
- a season or a year: `the summer of 2023`, `in 2023`, `early 2024` (January-April), `last year`;
- anchored: `the Monday before July 24, 2023`, `the week after 8 December 2023`, `the day
  before …`, `3 days after …`;
- anchored to an event: `the week after Amara's birthday party`, `the day before Nate's trip
  to Ljubljana` (`find_event`): recall finds the memory that tells of the event and reads
  the window from its day.

A date without a year is the latest such date not after `as_of`. Written by hand because
the libraries that find dates in free text read "may" and "march" as months, and none
resolves anchored phrases like "the Monday before …".
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = {name.lower(): index for index, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): index for index, name in enumerate(calendar.month_abbr) if name}
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): index for index, name in enumerate(calendar.day_name)}
SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = r"(?P<{0}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{0}>(?:19|20)\d\d)"
_WEEKDAY = r"(?P<{0}>" + "|".join(WEEKDAYS) + r")"
_NUMBER = r"(?P<{0}>\d{{1,3}}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10}


def _g(pattern: str, *names: str) -> str:
    return pattern.format(*names)


# A point in time, most specific first: each alternative names its groups.
_DATE = "|".join((
    r"(?P<iso>(?P<iy>(?:19|20)\d\d)-(?P<im>[01]\d)-(?P<id>[0-3]\d))",
    r"(?P<dmy>" + _g(_DAY, "d1") + r"(?: of)? " + _g(_MONTH, "m1") + r",?(?: " + _g(_YEAR, "y1") + r")?)",
    r"(?P<mdy>" + _g(_MONTH, "m2") + r" " + _g(_DAY, "d2") + r"(?:,? " + _g(_YEAR, "y2") + r")?)(?!\d)",
    r"(?P<rel_day>yesterday|today|tonight)",
    r"(?P<last_wd>(?:last|this past) " + _g(_WEEKDAY, "w1") + r")",
    r"(?P<ago>" + _g(_NUMBER, "n1") + r" (?P<u1>day|week|month|year)s? ago)",
))
# A span of time.
_SPAN = "|".join((
    r"(?P<part_month>(?P<p1>early|mid|late|the (?:start|beginning|middle|end) of) " + _g(_MONTH, "m3")
    + r"(?: " + _g(_YEAR, "y3") + r")?)",
    r"(?P<month>" + _g(_MONTH, "m4") + r"(?: (?:of )?" + _g(_YEAR, "y4") + r"))",
    r"(?P<in_month>(?:in|during|since|throughout) " + _g(_MONTH, "m5") + r")(?! \d)",
    r"(?P<season>(?:the )?(?P<s1>spring|summer|autumn|fall|winter)(?: of)? " + _g(_YEAR, "y5") + r")",
    r"(?P<part_year>(?P<p2>early|mid|late|the (?:start|beginning|middle|end) of) " + _g(_YEAR, "y6") + r")",
    r"(?P<year>(?:in|during|of|since|throughout|for) " + _g(_YEAR, "y7") + r")",
    r"(?P<rel_span>(?P<r1>last|this|past|previous) (?P<u2>week|month|year|weekend))",
))
_ANCHORED = re.compile(
    r"\b(?:the |on the )?(?P<what>" + _g(_WEEKDAY, "aw") + r"|day|week|weekend|month|"
    + _g(_NUMBER, "an") + r" (?P<au>day|week)s?) (?P<dir>before|after|following|prior to) (?P<anchor>"
    + _DATE + r")", re.IGNORECASE)
# "the week after Amara's birthday party": anchored to an event a memory tells of, not a date.
_EVENT = re.compile(
    r"\b(?:in |during |on )?(?:the )?(?P<what>" + _g(_WEEKDAY, "aw") + r"|day|week|weekend|month|"
    + _g(_NUMBER, "an") + r" (?P<au>day|week)s?) (?P<dir>before|after|following|prior to) "
    r"(?P<event>[^?.!,;:\n]{3,80}?)\s*(?=[?.!,;:\n]|$)", re.IGNORECASE)
_POINT = re.compile(r"\b(?:on |in |at |from |since |around )?(?:the )?(?:" + _DATE + r")\b", re.IGNORECASE)
_RANGE = re.compile(r"\b(?:in |during |over |from |since )?(?:" + _SPAN + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class TimeFrame:
    """[start, end) in UTC, and the words of the question that named it."""

    start: datetime
    end: datetime
    phrase: str

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400

    def describe(self) -> str:
        last = (self.end - timedelta(seconds=1)).date()
        if self.days <= 1:
            return self.start.date().isoformat()
        return f"{self.start.date().isoformat()} to {last.isoformat()}"


def find(text: str, *, now: datetime) -> TimeFrame | None:
    """The first time window `text` names, or None."""
    today = now.astimezone(UTC).date()
    for pattern, read in ((_ANCHORED, _anchored), (_POINT, _point), (_RANGE, _span)):
        for match in pattern.finditer(text):
            try:
                window = read(match, today)
            except (OverflowError, ValueError):
                # Off the calendar ("yesterday" as of year 1, "this year" as of 9999).
                continue
            if window is not None:
                return TimeFrame(_at(window[0]), _at(window[1]), match.group(0).strip())
    return None


@dataclass(frozen=True)
class EventAnchor:
    """A window named relative to an event ("the week after <event>"): recall finds the
    memory that tells of the event and reads the window from its day (`window`)."""

    event: str
    phrase: str
    before: bool
    what: str
    weekday: str | None
    number: str | None
    unit: str | None

    def window(self, day: date) -> TimeFrame:
        start, end = _relative_to(day, before=self.before, what=self.what, weekday=self.weekday,
                                  number=self.number, unit=self.unit)
        return TimeFrame(_at(start), _at(end), self.phrase)


def find_event(text: str) -> EventAnchor | None:
    """The first window `text` names relative to an event rather than a date, or None."""
    for match in _EVENT.finditer(text):
        event = match.group("event").strip()
        if len(re.findall(r"\w+", event)) < 2 or _POINT.fullmatch(event) or _RANGE.fullmatch(event):
            continue
        return EventAnchor(event=event, phrase=match.group(0).strip(),
                           before=match.group("dir").lower() in ("before", "prior to"),
                           what=match.group("what").lower(), weekday=match.group("aw"),
                           number=match.group("an"), unit=match.group("au"))
    return None


def without(text: str, frame: TimeFrame | None) -> str:
    """`text` without the words that named the window (they match nothing a memory says)."""
    if frame is None:
        return text
    rest = text.replace(frame.phrase, " ", 1)
    return re.sub(r"\s{2,}", " ", re.sub(r"\s+([?.!,])", r"\1", rest)).strip()


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _number(value: str) -> int:
    return _WORDS.get(value.lower()) or int(value)


def _latest(month: int, day: int | None, today: date) -> date | None:
    """The latest date with this month (and day) not after today."""
    for year in (today.year, today.year - 1):
        try:
            candidate = date(year, month, day or 1)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


def _day_of(match: re.Match[str], today: date) -> date | None:
    """The day a _DATE alternative names."""
    g = match.groupdict()
    try:
        if g.get("iso"):
            return date(int(g["iy"]), int(g["im"]), int(g["id"]))
        for kind, d, m, y in (("dmy", "d1", "m1", "y1"), ("mdy", "d2", "m2", "y2")):
            if g.get(kind):
                month, day = MONTHS[g[m].lower()], int(g[d])
                return date(int(g[y]), month, day) if g.get(y) else _latest(month, day, today)
    except ValueError:
        return None
    if g.get("rel_day"):
        return today - timedelta(days=1) if g["rel_day"].lower() == "yesterday" else today
    if g.get("last_wd"):
        back = (today.weekday() - WEEKDAYS[g["w1"].lower()]) % 7 or 7
        return today - timedelta(days=back)
    if g.get("ago"):
        return today - timedelta(days=_number(g["n1"]) * UNITS[g["u1"].lower()])
    return None


def _point(match: re.Match[str], today: date) -> tuple[date, date] | None:
    day = _day_of(match, today)
    if day is None:
        return None
    if match.groupdict().get("ago"):
        # "3 weeks ago" is roughly then: half a unit either side.
        half = timedelta(days=max(1, UNITS[match.group("u1").lower()] // 2))
        return day - half, day + half
    return day, day + timedelta(days=1)


def _anchored(match: re.Match[str], today: date) -> tuple[date, date] | None:
    anchor = _day_of(match, today)
    if anchor is None:
        return None
    return _relative_to(anchor, before=match.group("dir").lower() in ("before", "prior to"),
                        what=match.group("what").lower(), weekday=match.group("aw"), number=match.group("an"),
                        unit=match.group("au"))


def _relative_to(anchor: date, *, before: bool, what: str, weekday: str | None, number: str | None,
                 unit: str | None) -> tuple[date, date]:
    """The window "the <what> before/after" a day names."""
    if weekday:
        index = WEEKDAYS[weekday.lower()]
        if before:
            day = anchor - timedelta(days=(anchor.weekday() - index) % 7 or 7)
        else:
            day = anchor + timedelta(days=(index - anchor.weekday()) % 7 or 7)
        return day, day + timedelta(days=1)
    if number:
        length = _number(number) * UNITS[(unit or "day").lower()]
    else:
        length = {"day": 1, "week": 7, "weekend": 7, "month": 30}[what]
    # "the day before", "3 days after": one day; "the week before", "2 weeks after": the span.
    if what == "day" or (unit or "").lower() == "day":
        day = anchor - timedelta(days=length) if before else anchor + timedelta(days=length)
        return day, day + timedelta(days=1)
    return (anchor - timedelta(days=length), anchor) if before else (anchor + timedelta(days=1),
                                                                   anchor + timedelta(days=length + 1))


def _month_span(year: int, month: int) -> tuple[date, date]:
    end = date(year + (month == 12), month % 12 + 1, 1)
    return date(year, month, 1), end


def _part(part: str) -> int:
    """early / mid / late: the first, middle or last third (0, 1, 2)."""
    part = part.lower()
    if part.startswith(("early", "the start", "the beginning")):
        return 0
    return 1 if part.startswith(("mid", "the middle")) else 2


def _part_of_month(year: int, month: int, part: str) -> tuple[date, date]:
    """Days 1-10, 11-20, or 21 to the end."""
    start, end = _month_span(year, month)
    third = _part(part)
    return (start + timedelta(days=10 * third),
            end if third == 2 else start + timedelta(days=10 * (third + 1)))


def _part_of_year(year: int, part: str) -> tuple[date, date]:
    """January-April, May-August, or September-December."""
    third = _part(part)
    return date(year, 4 * third + 1, 1), date(year + 1, 1, 1) if third == 2 else date(year, 4 * third + 5, 1)


def _span(match: re.Match[str], today: date) -> tuple[date, date] | None:
    g = match.groupdict()
    if g.get("part_month"):
        month = MONTHS[g["m3"].lower()]
        first = date(int(g["y3"]), month, 1) if g.get("y3") else _latest(month, None, today)
        return _part_of_month(first.year, month, g["p1"]) if first else None
    if g.get("month"):
        return _month_span(int(g["y4"]), MONTHS[g["m4"].lower()])
    if g.get("in_month"):
        first = _latest(MONTHS[g["m5"].lower()], None, today)
        return _month_span(first.year, first.month) if first else None
    if g.get("season"):
        start_month, length = SEASONS[g["s1"].lower()]
        start = date(int(g["y5"]), start_month, 1)
        end_year, end_month = divmod(start_month - 1 + length, 12)
        return start, date(start.year + end_year, end_month + 1, 1)
    if g.get("part_year"):
        return _part_of_year(int(g["y6"]), g["p2"])
    if g.get("year"):
        year = int(g["y7"])
        return date(year, 1, 1), date(year + 1, 1, 1)
    if g.get("rel_span"):
        return _relative(g["r1"].lower(), g["u2"].lower(), today)
    return None


def _relative(which: str, unit: str, today: date) -> tuple[date, date]:
    this = which == "this"
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday if this else monday - timedelta(days=7)
        if unit == "weekend":
            start += timedelta(days=5)
            return start, start + timedelta(days=2)
        return start, start + timedelta(days=7)
    if unit == "month":
        first = today.replace(day=1)
        if not this:
            first = (first - timedelta(days=1)).replace(day=1)
        return _month_span(first.year, first.month)
    year = today.year if this else today.year - 1
    return date(year, 1, 1), date(year + 1, 1, 1)
