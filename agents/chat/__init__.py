from agents.chat.engine import ChatEngine, ChatMemory

__all__ = ["ChatEngine", "ChatMemory"]
