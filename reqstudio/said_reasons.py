"""A record that keeps why something failed twice: `reason` in English, as it was recorded,
and `failure`, the same as a code and its values. Either can be missing from an older record;
`said_or` picks the catalogue's words when the failure is there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, computed_field

from reqstudio.failures import said_or


class SaidReason(BaseModel):
    """`text(language)` says the record's reason; its JSON carries the Chinese (`reason_zh`),
    said by the catalogue when the JSON is written. The fields are the record's own, so each
    keeps its place and description."""

    if TYPE_CHECKING:
        reason: str
        failure: dict[str, Any]

    def text(self, language: str) -> str:
        return said_or(self.failure, self.reason, language)

    @computed_field(description="the same reason in Chinese")  # type: ignore[prop-decorator]
    @property
    def reason_zh(self) -> str:
        return self.text("zh")
