"""`reqstudio diff`: registered from `reqstudio.workspace.cli`."""

from reqstudio.workspace.cli import register_diff as register

__all__ = ["register"]
