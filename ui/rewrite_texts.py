"""Rewrite mode's UI strings, Chinese and English, by key."""

from __future__ import annotations

from ui.texts import Catalog

tr = Catalog("rewrite")
