"""Chat mode: a streaming conversation with memory of the thread.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {"reqstudio.modes.chat.engine": ("ChatEngine", "ChatMemory")}
)
