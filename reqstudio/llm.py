"""The one model factory: every chat model in ReqStudio is built here, by role, from settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from reqstudio.calls import RetryPolicy, policy_for
from reqstudio.settings import ModelRole, ModelSpec, Settings
from reqstudio.structured import json_schema_format

EMBEDDED_MODEL_NAME = "smollm2-135m-instruct"
NO_KEY = "sk-no-key-required"
EMBEDDED_CONTEXT_TOKENS = 8192  # `EmbeddedModelServer`'s n_ctx

# Context windows (tokens) of models people configure often; others are assumed to have
# DEFAULT_CONTEXT_TOKENS unless OPENAI_CONTEXT_TOKENS says otherwise.
KNOWN_CONTEXT_TOKENS = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "deepseek-chat": 64_000,
    "deepseek-reasoner": 64_000,
    "qwen-plus": 131_072,
    "qwen-turbo": 1_000_000,
}
DEFAULT_CONTEXT_TOKENS = 128_000


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (no encoding files offline): one token per CJK character,
    one per four other characters. Errs high for Chinese, which is the safe side here."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")
    return cjk + (len(text) - cjk + 3) // 4


@dataclass(frozen=True)
class Endpoint:
    """Where the models live: a provider's base URL (None = OpenAI) and its key."""

    base_url: str | None
    api_key: str
    model: str
    embedded: bool = False

    @property
    def supports_json_schema(self) -> bool:
        # OpenAI itself and llama.cpp accept response_format json_schema; for other
        # OpenAI-compatible providers we cannot know, so the prompt + repair path is used.
        return self.embedded or self.base_url is None

    @property
    def display_name(self) -> str:
        host = "OpenAI" if self.base_url is None else self.base_url
        return f"{self.model} @ {host}"


def endpoint_from_settings(settings: Settings, embedded_base_url: str | None = None) -> Endpoint:
    if settings.uses_embedded_model:
        if embedded_base_url is None:
            raise RuntimeError("no provider configured and the embedded model is not running")
        return Endpoint(embedded_base_url, NO_KEY, EMBEDDED_MODEL_NAME, embedded=True)
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else NO_KEY
    return Endpoint(settings.openai_base_url, key, settings.openai_model)


class ModelFactory:
    """Builds `ChatOpenAI` clients per role: temperature, streaming with usage, timeout.

    The SDK's own retries are off: every call is retried by its one policy in
    `reqstudio.calls` (`policy(role)`), so attempts are counted once and logged."""

    def __init__(self, settings: Settings, endpoint: Endpoint):
        self.settings = settings
        self.endpoint = endpoint

    def model_name(self, role: ModelRole) -> str:
        if role == "evaluation" and self.settings.openai_evaluation_model:
            return self.settings.openai_evaluation_model
        if self.endpoint.embedded:
            return self.endpoint.model
        return self.endpoint.model

    def uses_json_schema(self) -> bool:
        mode = self.settings.structured_output
        if mode == "auto":
            return self.endpoint.supports_json_schema
        return mode == "json_schema"

    def response_format(
        self, schema: type[BaseModel], json_schema: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """How to ask this provider for `schema` output; None where only the prompt can ask."""
        if not self.uses_json_schema():
            return None
        dialect = "llama_cpp" if self.endpoint.embedded else "openai"
        return json_schema_format(schema, dialect=dialect, json_schema=json_schema)

    def context_tokens(self, role: ModelRole) -> int:
        """How many tokens the role's model takes in one request (prompt and answer)."""
        if self.settings.context_tokens is not None:
            return self.settings.context_tokens
        if self.endpoint.embedded:
            return EMBEDDED_CONTEXT_TOKENS
        return KNOWN_CONTEXT_TOKENS.get(self.model_name(role), DEFAULT_CONTEXT_TOKENS)

    def policy(self, role: str) -> RetryPolicy:
        """The retry policy for calls of `role` (seed counts; OPENAI_MAX_RETRIES overrides)."""
        return policy_for(role, self.settings)

    def for_role(
        self,
        role: ModelRole,
        *,
        callbacks: Sequence[BaseCallbackHandler] = (),
        spec: ModelSpec | None = None,
        temperature: float | None = None,
        streaming: bool = True,
    ) -> ChatOpenAI:
        """A chat model for one role. `spec` (Agent mode) overrides model, URL, key, params."""
        base_url = self.endpoint.base_url
        api_key = self.endpoint.api_key
        model = self.model_name(role)
        extra: dict = {}
        if spec is not None:
            model = spec.model
            if spec.base_url:
                base_url = spec.base_url
            if spec.api_key is not None:
                api_key = spec.api_key.get_secret_value()
            if spec.temperature is not None and temperature is None:
                temperature = spec.temperature
            extra = dict(spec.params)
        return ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=api_key,
            temperature=self.settings.temperature_for(role) if temperature is None else temperature,
            streaming=streaming,
            stream_usage=True,
            timeout=self.settings.request_timeout,
            max_retries=0,
            callbacks=list(callbacks) or None,
            metadata={"reqstudio_role": role, "reqstudio_model": model},
            tags=[f"role:{role}"],
            **extra,
        )
