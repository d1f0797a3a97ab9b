"""`reqstudio export`: registered from `reqstudio.workspace.cli`."""

from reqstudio.workspace.cli import register_export as register

__all__ = ["register"]
