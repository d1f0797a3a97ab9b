"""A translation table as the rule against them finds it (tests/test_messages.py)."""

GREETING = {"zh": "你好", "en": "Hello"}
