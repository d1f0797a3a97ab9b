"""`reqstudio baseline`: registered from `reqstudio.workspace.store_cli`."""

from reqstudio.workspace.store_cli import register_baseline as register

__all__ = ["register"]
