"""Translation tables as the rule against them finds them (tests/test_messages.py)."""

GREETING = {"zh": "你好", "en": "Hello"}

KINDS = {"modal": ("modal verb", "情态动词"), "actor": ("actor", "主体")}
