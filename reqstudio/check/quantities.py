"""Numbers with their units and bounds in a requirement, normalised so that different ways of
writing one value compare equal: "2 s", "two seconds", "2000 ms" and "2秒" are all 2 seconds;
"within 2 seconds", "in under 2 s", "no more than 2 s" and "2秒内" are all an upper bound.

`quantities(text)` finds them; `Quantity.same_as` compares two. Used by `reqstudio.check.meaning`
(what a rewrite must keep) and by the cross-requirement checks (one measure in several units).
No model, no dependency beyond the standard library."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# --- units -------------------------------------------------------------------------------
# (spellings, dimension, factor to the dimension's base unit, canonical symbol). Data sizes in
# decimal prefixes (kB = 1000 B) and binary ones (KiB = 1024 B) are different values on
# purpose: "MB" and "MiB" name different sizes. Temperatures are converted with an offset.
_UNITS: tuple[tuple[tuple[str, ...], str, float, str], ...] = (
    (("ns", "nanosecond", "nanoseconds", "纳秒"), "time", 1e-9, "ns"),
    (("µs", "μs", "us", "microsecond", "microseconds", "微秒"), "time", 1e-6, "µs"),
    (("ms", "msec", "msecs", "millisecond", "milliseconds", "毫秒"), "time", 1e-3, "ms"),
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), "time", 1.0, "s"),
    (("min", "mins", "minute", "minutes", "分钟"), "time", 60.0, "min"),
    (("h", "hr", "hrs", "hour", "hours", "小时", "个小时", "钟头"), "time", 3600.0, "h"),
    (("day", "days", "天", "日", "个工作日", "工作日"), "time", 86400.0, "d"),
    (("week", "weeks", "周", "星期", "个星期"), "time", 604800.0, "week"),
    (("month", "months", "个月"), "time", 2592000.0, "month"),
    (("year", "years", "年"), "time", 31536000.0, "year"),
    (("bit", "bits", "位", "比特"), "data", 0.125, "bit"),
    (("kbit", "kbits", "Kbit", "Kbits", "kilobit", "kilobits"), "data", 125.0, "kbit"),
    (("Mbit", "Mbits", "megabit", "megabits"), "data", 125e3, "Mbit"),
    (("Gbit", "Gbits", "gigabit", "gigabits"), "data", 125e6, "Gbit"),
    (("B", "byte", "bytes", "字节"), "data", 1.0, "B"),
    (
        ("kB", "KB", "Kbyte", "Kbytes", "kbyte", "kbytes", "kilobyte", "kilobytes"),
        "data",
        1e3,
        "kB",
    ),
    (("MB", "Mbyte", "Mbytes", "megabyte", "megabytes", "兆", "兆字节"), "data", 1e6, "MB"),
    (("GB", "Gbyte", "Gbytes", "gigabyte", "gigabytes"), "data", 1e9, "GB"),
    (("TB", "Tbyte", "Tbytes", "terabyte", "terabytes"), "data", 1e12, "TB"),
    (("KiB", "kibibyte", "kibibytes"), "data", 1024.0, "KiB"),
    (("MiB", "mebibyte", "mebibytes"), "data", 1024.0**2, "MiB"),
    (("GiB", "gibibyte", "gibibytes"), "data", 1024.0**3, "GiB"),
    (("TiB", "tebibyte", "tebibytes"), "data", 1024.0**4, "TiB"),
    (("bps", "bit/s", "bits/s", "bits/sec", "bits per second"), "rate", 1.0, "bit/s"),
    (("kbps", "Kbps", "kbit/s", "kbits/s", "Kbit/s", "kb/s"), "rate", 1e3, "kbit/s"),
    (("Mbps", "Mbit/s", "Mbits/s", "Mbits/sec", "Mb/s"), "rate", 1e6, "Mbit/s"),
    (("Gbps", "Gbit/s", "Gbits/s", "Gbits/sec", "Gb/s"), "rate", 1e9, "Gbit/s"),
    (("kB/s", "KB/s", "KBps"), "rate", 8e3, "kB/s"),
    (("MB/s", "MBps", "Mbytes/s", "Mbytes/sec"), "rate", 8e6, "MB/s"),
    (("GB/s", "GBps"), "rate", 8e9, "GB/s"),
    (("Hz", "hertz", "赫兹"), "frequency", 1.0, "Hz"),
    (("kHz", "kilohertz", "千赫"), "frequency", 1e3, "kHz"),
    (("MHz", "megahertz", "兆赫"), "frequency", 1e6, "MHz"),
    (("GHz", "gigahertz"), "frequency", 1e9, "GHz"),
    (
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters", "毫米"),
        "length",
        1e-3,
        "mm",
    ),
    (
        ("cm", "centimetre", "centimetres", "centimeter", "centimeters", "厘米"),
        "length",
        1e-2,
        "cm",
    ),
    (("m", "metre", "metres", "meter", "meters", "米"), "length", 1.0, "m"),
    (
        ("km", "kilometre", "kilometres", "kilometer", "kilometers", "公里", "千米"),
        "length",
        1e3,
        "km",
    ),
    (("ft", "foot", "feet"), "length", 0.3048, "ft"),
    (("inch", "inches"), "length", 0.0254, "in"),
    (("mile", "miles"), "length", 1609.344, "mile"),
    (("mg", "milligram", "milligrams", "毫克"), "mass", 1e-6, "mg"),
    (("g", "gram", "grams", "克"), "mass", 1e-3, "g"),
    (("kg", "kilogram", "kilograms", "千克", "公斤"), "mass", 1.0, "kg"),
    (("t", "tonne", "tonnes", "吨"), "mass", 1e3, "t"),
    (("%", "％", "percent", "per cent"), "percent", 1.0, "%"),
    (("°C", "℃", "degrees Celsius", "degree Celsius", "摄氏度"), "temperature", 1.0, "°C"),
    (("°F", "degrees Fahrenheit", "degree Fahrenheit"), "temperature", 1.0, "°F"),
    (("V", "volt", "volts", "伏"), "voltage", 1.0, "V"),
    (("kV", "kilovolt", "kilovolts"), "voltage", 1e3, "kV"),
    (("W", "watt", "watts", "瓦"), "power", 1.0, "W"),
    (("kW", "kilowatt", "kilowatts", "千瓦"), "power", 1e3, "kW"),
    (("px", "pixel", "pixels", "像素"), "pixels", 1.0, "px"),
    (("USD", "dollar", "dollars", "$"), "money:USD", 1.0, "USD"),
    (("EUR", "euro", "euros", "€"), "money:EUR", 1.0, "EUR"),
    (("元", "人民币", "RMB", "CNY", "¥"), "money:CNY", 1.0, "CNY"),
)
# Units that are also ordinary words or letters: only right after a number ("5 m", "2 s"),
# never after a number word ("one m" is nothing), and not before a letter ("5 s-boxes").
_SHORT_UNITS = {
    "s",
    "m",
    "h",
    "t",
    "B",
    "V",
    "W",
    "g",
    "us",
    "min",
    "位",
    "日",
    "年",
    "周",
    "米",
    "克",
}
# Chinese characters that follow a number as a measure word (a count): 3次, 5个, 2条
_ZH_COUNTERS = "个次条项名位台件份张页人种倍行列层级步轮笔"


@dataclass(frozen=True)
class Unit:
    symbol: str  # canonical ("s", "MiB", "%")
    dimension: str  # "time", "data", "rate", ...; "" for a bare number
    factor: float  # to the dimension's base unit


@cache
def _unit_table() -> dict[str, Unit]:
    table: dict[str, Unit] = {}
    for spellings, dimension, factor, symbol in _UNITS:
        for spelling in spellings:
            table[spelling] = Unit(symbol, dimension, factor)
    return table


def unit_spellings() -> tuple[str, ...]:
    """Every spelling of every unit the table knows."""
    return tuple(_unit_table())


def unit_of(spelling: str) -> Unit | None:
    """The unit a spelling names ("secs" -> s; "MiB" -> MiB; case kept for data units:
    "mb" is nothing, "Mb" a megabit), or None."""
    table = _unit_table()
    found = table.get(spelling)
    if found is None and spelling.lower() in table and spelling.lower() not in _CASE_MATTERS:
        found = table[spelling.lower()]
    return found


# lower-cased spellings that differ from another spelling only by case ("mb" vs "MB"/"Mb")
_CASE_MATTERS = {"mb", "gb", "kb", "tb", "b", "mbps", "gbps", "kbps", "m", "t", "w", "v"}


@cache
def _unit_pattern() -> re.Pattern[str]:
    spellings = sorted(_unit_table(), key=len, reverse=True)
    latin = [s for s in spellings if not _has_cjk(s)]
    cjk = [s for s in spellings if _has_cjk(s)]
    return re.compile(
        r"(?:(?P<latin>"
        + "|".join(re.escape(s) for s in latin)
        + r")(?![A-Za-z0-9_-])|(?P<cjk>"
        + "|".join(re.escape(s) for s in cjk)
        + "))",
        re.IGNORECASE,
    )


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# --- numbers -----------------------------------------------------------------------------

_SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "half": 0.5, "a dozen": 12, "dozen": 12,
    "single": 1, "once": 1, "twice": 2,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1e6, "billion": 1e9}
_WORD_NUMBER = re.compile(
    r"\b(?:(?:" + "|".join(sorted(_SMALL, key=len, reverse=True)) + r")(?:[- ](?:one|two|three|"
    r"four|five|six|seven|eight|nine))?(?:\s+(?:hundred|thousand|million|billion))*"
    r"|(?:a\s+)?(?:hundred|thousand|million|billion))\b",
    re.IGNORECASE,
)
_DIGITS = r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_ZH_DIGITS = "零〇一二两三四五六七八九十百千万亿"
_ZH_VALUES = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_SCALES = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}


def word_number(text: str) -> float | None:
    """ "two" 2, "twenty-five" 25, "two hundred" 200, "a thousand" 1000, "half" 0.5."""
    words = re.split(r"[\s-]+", text.lower().strip())
    if words[:1] == ["a"] and len(words) > 1:
        words = ["one", *words[1:]]
    if " ".join(words) in _SMALL:
        return float(_SMALL[" ".join(words)])
    total, current = 0.0, 0.0
    for word in words:
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0.0
        else:
            return None
    return total + current


def zh_number(text: str) -> float | None:
    """三 3, 十五 15, 两百 200, 一万 10000, 三千五百 3500, 3万 30000."""
    if re.fullmatch(r"[\d.]+万", text):
        return float(text[:-1]) * 10_000
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _ZH_VALUES:
            digit = _ZH_VALUES[ch]
        elif ch in ("万", "亿"):
            section = (section + digit) * _ZH_SCALES[ch]
            total, section, digit = total + section, 0, 0
        elif ch in _ZH_SCALES:
            section += (digit or 1) * _ZH_SCALES[ch]
            digit = 0
        else:
            return None
    return float(total + section + digit)


# --- bounds ------------------------------------------------------------------------------
# An upper bound ("within 2 s" = "in under 2 s" = "no more than 2 s") or a lower one; whether
# the bound is strict is left out, as people write the two interchangeably.
_UPPER_BEFORE = (
    r"within|in\s+under|under|in\s+less\s+than|less\s+than|fewer\s+than|below|lower\s+than|"
    r"smaller\s+than|shorter\s+than|at\s+most|up\s+to|no\s+more\s+than|not\s+more\s+than|"
    r"no\s+later\s+than|not\s+later\s+than|no\s+longer\s+than|not\s+longer\s+than|"
    r"no\s+greater\s+than|not\s+greater\s+than|no\s+higher\s+than|not\s+higher\s+than|"
    r"a\s+maximum\s+of|maximum\s+of|maximum|max\.?|(?:shall|must|should|will|may|does|do|to)"
    r"\s+not\s+exceed|never\s+exceed|not\s+exceeding|not\s+to\s+exceed|≤|<=|<|不超过|不超出|"
    r"(?:less|fewer|lower|smaller|shorter)\s+than\s+or\s+equal\s+to|equal\s+to\s+or\s+less\s+than|"
    r"can\s*not\s+exceed|不大于|不高于|不多于|不长于|不晚于|最多|至多|最长|最大|小于|低于|少于|短于|在"
)
_LOWER_BEFORE = (
    r"at\s+least|more\s+than|greater\s+than|higher\s+than|longer\s+than|larger\s+than|over|"
    r"(?:greater|more|higher|larger|longer)\s+than\s+or\s+equal\s+to|"
    r"equal\s+to\s+or\s+(?:greater|more)\s+than|above|in\s+excess\s+of|exceeding|exceeds?|no\s+less\s+than|not\s+less\s+than|"
    r"no\s+fewer\s+than|not\s+fewer\s+than|no\s+shorter\s+than|no\s+lower\s+than|"
    r"not\s+lower\s+than|a\s+minimum\s+of|minimum\s+of|minimum|min\.|≥|>=|>|至少|不少于|"
    r"不低于|不小于|不短于|最少|最低|大于|高于|多于|超过|长于"
)
_UPPER_AFTER = r"or\s+less|or\s+fewer|or\s+below|or\s+lower|or\s+shorter|max(?:imum)?|内|以内|之内|以下|或更少|或以下"
_LOWER_AFTER = (
    r"or\s+more|or\s+greater|or\s+above|or\s+higher|or\s+longer|or\s+better|以上|或以上|或更多|起"
)
_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:(?P<upper>" + _UPPER_BEFORE + r")|(?P<lower>" + _LOWER_BEFORE + r"))\s*$",
    re.IGNORECASE,
)
_AFTER = re.compile(
    r"^\s*(?:(?P<upper>" + _UPPER_AFTER + r")|(?P<lower>" + _LOWER_AFTER + r"))(?![A-Za-z])",
    re.IGNORECASE,
)
# Chinese puts a bound before the verb: 至少保留30天, 最多允许3次
_BEFORE_ZH_VERB = re.compile(
    r"(?:(?P<upper>不超过|不多于|最多|至多|最长)|(?P<lower>至少|不少于|不低于|最少))"
    r"[\u4e00-\u9fff]{1,4}\s*$"
)
_PER = re.compile(
    r"\s*(?:(?:[A-Za-z-]+\s+){0,2}?(?:per|a|an|each|every)\s+|/\s*)"
    r"(?P<unit>second|sec|s|minute|min|hour|hr|h|day|week|month|year)s?\b"
    r"|\s*(?:[\u4e00-\u9fff]{0,3}?)(?:每|/)(?P<zh>秒|秒钟|分钟|小时|天|日|周|月|年)",
    re.IGNORECASE,
)
_PER_ZH_BEFORE = re.compile(r"每(?P<zh>秒|秒钟|分钟|小时|天|日|周|月|年)(?:[^\d，。；]{0,4})$")


@dataclass(frozen=True)
class Quantity:
    """A number as written in a requirement, its value in the base unit of its dimension
    (seconds, bytes, bit/s, Hz, metres, kg, percent, ...; a bare number as it is) and its
    bound: "upper" (within, at most, 内), "lower" (at least, 以上) or "" (none given)."""

    text: str  # as written, bound words included: "within 2 seconds"
    value: float  # in the dimension's base unit
    dimension: str  # "" for a number without a unit ("3 attempts"); "rate/time" per time
    unit: str  # canonical symbol ("s", "MiB"), "" for none
    bound: str  # "upper", "lower" or ""
    start: int
    end: int
    number: str = ""  # the number alone, as written ("2", "two", "两")

    def same_as(self, other: Quantity) -> bool:
        """Equal values of one dimension, bounds that do not contradict: an unstated bound
        matches any ("respond in 2 s" and "within 2 s" say the same), "upper" and "lower" do
        not match each other."""
        if self.dimension != other.dimension:
            return False
        if abs(self.value - other.value) > 1e-9 * max(abs(self.value), abs(other.value), 1):
            return False
        return not (self.bound and other.bound and self.bound != other.bound)

    @property
    def key(self) -> tuple[str, float]:
        return self.dimension, round(self.value, 9)


_NUMBER = re.compile(
    r"(?P<zh>(?<![A-Za-z0-9_.\-/:])\d+(?:\.\d+)?万|[" + _ZH_DIGITS + r"]+)"
    r"|(?P<digits>(?<![A-Za-z0-9_.\-/:])(?:" + _DIGITS + r"))(?![\w/:-]*[A-Za-z]\d)"
    r"|(?P<word>" + _WORD_NUMBER.pattern + ")",
    re.IGNORECASE,
)
# ids, versions, dates, section numbers and times of day: numbers that are no quantity
_NOT_A_QUANTITY = re.compile(
    r"[A-Za-z][A-Za-z0-9]*[-_.]\d[\w.-]*"  # FR-01, v2, REQ_3, ISO-9001
    r"|\b\d+(?:\.\d+){2,}\b"  # 3.2.1 sections, 1.2.3 versions
    r"|\b\d{1,4}[/-]\d{1,2}[/-]\d{1,4}\b"  # dates
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"  # 10:30
    r"|\b[A-Za-z]+\d+[A-Za-z0-9]*\b"  # MD5, H264, ISO9001
    r"|第[\d零一二三四五六七八九十百]+|\d{4}\s*年"  # ordinals, years
    r"|(?:section|chapter|appendix|table|figure|step|phase|version|release|level|"
    r"clause|paragraph|item|page|rule|priority|no\.|number)\s+\d[\d.]*",
    re.IGNORECASE,
)


def quantities(text: str) -> list[Quantity]:
    """Every number of `text` with its unit (when one follows) and its bound (when one is
    written next to it), in order. Numbers inside ids, versions, dates and section numbers
    are none; a number word counts only with a unit or a bound ("at least one", "two
    seconds"), and a Chinese numeral only with a unit, a measure word or a bound."""
    if not _ANY_NUMBER.search(text):
        return []
    found: list[Quantity] = []
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        # an id, a version, a date around the number (looked for near it only: scanning
        # the whole text for them cost more than the rest of this function)
        near = _NOT_A_QUANTITY.finditer(text, max(0, start - 24), min(len(text), end + 16))
        if any(m.start() <= start < m.end() for m in near):
            continue
        kind = "digits" if match.group("digits") else "zh" if match.group("zh") else "word"
        number = match.group()
        value = (
            float(number.replace(",", ""))
            if kind == "digits"
            else zh_number(number)
            if kind == "zh"
            else word_number(number)
        )
        if value is None:
            continue
        quantity = _with_unit_and_bound(text, start, end, number, value, kind)
        if quantity is not None:
            found.append(quantity)
    return found


_ANY_NUMBER = re.compile(
    r"\d|[" + _ZH_DIGITS + r"]|\b(?:" + "|".join(_SMALL) + r"|hundred|thousand|million)\b",
    re.IGNORECASE,
)


def _with_unit_and_bound(
    text: str, start: int, end: int, number: str, value: float, kind: str
) -> Quantity | None:
    unit: Unit | None = None
    unit_end = end
    rest = text[end:]
    written = _unit_pattern().match(rest.lstrip(" \u00a0")) if rest else None
    gap = len(rest) - len(rest.lstrip(" \u00a0"))
    if written is not None:
        spelling = written.group()
        candidate = unit_of(spelling)
        short = spelling in _SHORT_UNITS or spelling.lower() in _SHORT_UNITS
        # "B" written against a number is a letter of a name ("Order 1630.2B"), not bytes
        glued_byte = spelling == "B" and gap == 0
        if candidate is not None and not (short and (kind == "word" or gap > 1)) and not glued_byte:
            unit, unit_end = candidate, end + gap + written.end()
    if kind == "digits" and unit is None and value.is_integer() and text[:start].endswith("$"):
        unit, start = unit_of("$"), start - 1
    bound, bound_start, bound_end = _bound(text, start, unit_end)
    dimension = unit.dimension if unit else ""
    scaled = value * unit.factor if unit else value
    symbol = unit.symbol if unit else ""
    per_unit, per_end = _per_time(text, start, unit_end) if dimension != "time" else (None, 0)
    if per_unit is not None:  # "100 requests per second", "twice a day", 每秒100次
        dimension = f"{dimension or 'count'}/time"
        scaled, symbol = scaled / per_unit.factor, f"{symbol or '1'}/{per_unit.symbol}"
        bound_end = max(bound_end, per_end)
    counted = kind == "zh" and unit is None and rest[:1] != "" and rest[0] in _ZH_COUNTERS
    if counted and number == "一" and not bound and per_unit is None:
        return None  # 一个、一条: the article "a", not a count
    counted = counted or (kind == "word" and number.lower() != "one" and _COUNTED_EN.match(rest))
    if unit is None and per_unit is None and not bound and kind != "digits" and not counted:
        return None  # "one of the users", 统一, 一致: a number word alone is no quantity
    return Quantity(
        text=text[bound_start:bound_end].strip(),
        value=scaled,
        dimension=dimension,
        unit=symbol,
        bound=bound,
        start=bound_start,
        end=bound_end,
        number=number,
    )


# a number word counts things when a noun follows it ("three times", "two users")
_COUNTED_EN = re.compile(r"\s+(?!(?:of|or|and|to|another|more|less|than|by)\b)[a-z]{2,}\b")


def _per_time(text: str, start: int, end: int) -> tuple[Unit | None, int]:
    """The time unit of a rate written after the number ("per second", "a day", "/s", 每秒
    after it) or before it (每秒 100 次), and where it ends."""
    per = _PER.match(text, end)
    if per is not None:
        spelling = per.group("unit") or per.group("zh")
        spelling = {"sec": "s", "hr": "h"}.get(spelling.lower(), spelling)
        return unit_of(spelling), per.end()
    before = _PER_ZH_BEFORE.search(text, 0, start)
    if before is not None:
        return unit_of(before.group("zh")), end
    return None, 0


def _bound(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The bound written next to the number at [start, end): before it ("within", "至少",
    "不超过", or 至少 before a short Chinese verb) or after it ("or more", "以内"), and the
    span with it."""
    bound, bound_start, bound_end = "", start, end
    after = _AFTER.match(text[end : end + 20])
    for pattern, reach in ((_BEFORE, 40), (_BEFORE_ZH_VERB, 12)):
        window = max(0, start - reach)
        before = pattern.search(text, window, start)
        if before is None:
            continue
        # 在 is a bound only when 内 closes it: 在3秒内
        if before.group().strip() == "在" and not (after is not None and after.group("upper")):
            continue
        bound = "upper" if before.group("upper") else "lower"
        bound_start = before.start()
        break
    if after is not None:
        bound = bound or ("upper" if after.group("upper") else "lower")
        bound_end = end + after.end()
    return bound, bound_start, bound_end
