"""LLM access: one `ChatClient` seam, provider clients behind it, and wrappers (cache, limits)."""

from .base import ChatClient, ChatMessage, ChatRequest, ChatResponse, LLMError, Usage

__all__ = ["ChatClient", "ChatMessage", "ChatRequest", "ChatResponse", "LLMError", "Usage"]
