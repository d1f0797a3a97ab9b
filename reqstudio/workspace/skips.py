"""A line of `ItemSet.skipped`: an element of a file that was not read, or read only in part.

It is the English sentence the command line and `--json` have always shown (a `str`, so every
caller that prints, joins or compares lines goes on as before), and it carries its code and
values, so the browser says it in the user's language from the catalogue (`reqif_skip.*`)."""

from __future__ import annotations

from collections.abc import Callable

from reqstudio.messages import text


class Skip(str):
    code: str
    member: str
    values: dict[str, object]

    def __new__(cls, code: str, member: str = "", **values: object) -> Skip:
        line = super().__new__(cls, _worded(code, member, values, "en"))
        line.code, line.member, line.values = code, member, values
        return line

    def words(self, language: str, escape: Callable[[str], str] | None = None) -> str:
        """This line in `language` ('zh'/'en' or a locale name); `escape` applied to the
        values the file gave (identifiers, names), not to the catalogue's own marks."""
        if escape is None:
            return _worded(self.code, self.member, self.values, language)
        values = {k: escape(v) if isinstance(v, str) else v for k, v in self.values.items()}
        return _worded(self.code, escape(self.member), values, language)

    def __reduce__(self):  # kept in a session or a queue: its code and values travel with it
        return (_rebuilt, (self.code, self.member, self.values))


def _rebuilt(code: str, member: str, values: dict[str, object]) -> Skip:
    return Skip(code, member, **values)


def _worded(code: str, member: str, values: dict[str, object], language: str) -> str:
    if "name" in values and not values["name"]:  # a relation group without a name
        values = {**values, "name": text("reqif_skip.unnamed", language)}
    line = text(f"reqif_skip.{code}", language, **values)
    return f"{member}: {line}" if member else line


def skip_words(line: str, language: str, escape: Callable[[str], str] | None = None) -> str:
    """A skipped line in `language`; a line without a code (written by a version before this
    one, or by another reader) as it is (escaped whole)."""
    if isinstance(line, Skip):
        return line.words(language, escape)
    return escape(line) if escape is not None else line
