"""`reqstudio items`: registered from `reqstudio.workspace.store_cli`."""

from reqstudio.workspace.store_cli import register_items as register

__all__ = ["register"]
