"""An error the user reads, said in English and in Chinese."""

from __future__ import annotations


class BilingualError(ValueError):
    """`message(language)` gives the user's language; str() is the English."""

    def __init__(self, message_en: str, message_zh: str):
        super().__init__(message_en)
        self.message_en = message_en
        self.message_zh = message_zh

    def message(self, language: str = "en") -> str:
        return self.message_zh if language.startswith("zh") else self.message_en
