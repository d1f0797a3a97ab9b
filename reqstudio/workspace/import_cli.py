"""`reqstudio import`: registered from `reqstudio.workspace.cli`."""

from reqstudio.workspace.cli import register_import as register

__all__ = ["register"]
