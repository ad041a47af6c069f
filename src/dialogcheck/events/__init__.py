"""The conversation record: typed events, turns, and the loaders that build it."""

from .load import (
    conversation_files,
    iter_conversation_file,
    iter_conversations,
    load_conversation,
)
from .model import (
    FRAMEWORK_TOOLS,
    BlockEvent,
    BotMessage,
    Button,
    Conversation,
    Event,
    MemoryCleared,
    MemorySet,
    SkillEvent,
    ToolRun,
    UserMessage,
)
from .parse import conversation_from_dicts
from .values import json_equal

__all__ = [
    "FRAMEWORK_TOOLS",
    "BlockEvent",
    "BotMessage",
    "Button",
    "Conversation",
    "Event",
    "MemoryCleared",
    "MemorySet",
    "SkillEvent",
    "ToolRun",
    "UserMessage",
    "conversation_files",
    "conversation_from_dicts",
    "iter_conversation_file",
    "iter_conversations",
    "json_equal",
    "load_conversation",
]
