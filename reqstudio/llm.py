"""The one model factory: every chat model in ReqStudio is built here, by role, from settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai.chat_models.base import BaseChatOpenAI
from pydantic import BaseModel, ValidationError

from reqstudio.calls import RetryPolicy, policy_for
from reqstudio.coalesce import coalescing
from reqstudio.model_roles import OFFLINE_CONTEXT_TOKENS, OFFLINE_MAX_TOKENS, Role, declared
from reqstudio.settings import ModelRole, ModelSpec, Settings, SettingsError, supported_providers
from reqstudio.structured import json_schema_format

EMBEDDED_MODEL_NAME = "smollm2-135m-instruct"
NO_KEY = "sk-no-key-required"
EMBEDDED_CONTEXT_TOKENS = OFFLINE_CONTEXT_TOKENS  # `EmbeddedModelServer`'s n_ctx

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


# The embedded 135M model loops when left free (a Chinese chat answer ran on as gibberish for
# the whole 8192-token context, ~12 minutes on two cores). Every answer it gives is bounded
# per role, and prose answers are sampled with penalties against repetition; each role's mode
# declares both (`Role.offline_max_tokens`, `Role.offline_prose`).
# llama-cpp-python reads `max_tokens` and `repeat_penalty` from the body (ChatOpenAI would send
# `max_completion_tokens`), so they travel in `extra_body`.
EMBEDDED_PROSE_SAMPLING = {"repeat_penalty": 1.3, "frequency_penalty": 0.5, "presence_penalty": 0.3}


def _declared_role(role: str) -> Role | None:
    return declared().roles.get(role)


def embedded_max_tokens(role: str) -> int:
    """The most tokens one answer of `role` may have on the embedded model."""
    found = _declared_role(role)
    return found.offline_max_tokens if found is not None else OFFLINE_MAX_TOKENS


def embedded_request_body(role: str) -> dict[str, Any]:
    """What the embedded model is sent for `role` beyond the messages: its bound, and for
    prose the sampling that keeps a small model from repeating itself (JSON and tool calls
    are decoded against a grammar, where penalties on repeated quotes would only hurt)."""
    body: dict[str, Any] = {"max_tokens": embedded_max_tokens(role)}
    found = _declared_role(role)
    if found is not None and found.offline_prose:
        body.update(EMBEDDED_PROSE_SAMPLING)
    return body


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


@dataclass(frozen=True)
class ThreadModel:
    """A thread's own choice in the settings panel, for every model call of that thread: one
    of the configured models (`spec`; None: each role's configured model) and a temperature
    (None: each role's configured temperature)."""

    spec: ModelSpec | None = None
    temperature: float | None = None


def model_choices(settings: Settings, endpoint: Endpoint) -> dict[str, ModelSpec]:
    """The models a thread may pick, by name: the provider's OPENAI_MODEL, the evaluation
    model and REQSTUDIO_MODEL_CHOICES (all on OPENAI_BASE_URL with OPENAI_API_KEY), then the
    Agent models, each with its own provider, URL and key. Only names travel to the browser;
    a spec's URL and key stay here. The offline model is the only one when it answers."""
    if endpoint.embedded:
        return {}
    names = [endpoint.model, settings.openai_evaluation_model, *settings.model_choice_list]
    choices = {name: ModelSpec(model=name) for name in names if name}
    for spec in (settings.agent_function_call_model, settings.agent_answer_model):
        if spec is not None:
            choices.setdefault(spec.model, spec)
    return choices


@dataclass(frozen=True)
class ContextOverflow:
    """A request that would not fit the model's context: about `needed` tokens against the
    `limit` the model takes (`ModelFactory.context_tokens`, OPENAI_CONTEXT_TOKENS)."""

    needed: int
    limit: int


def context_overflow(
    prompt: str, factory: ModelFactory, role: ModelRole, *, answer_tokens: int = 0
) -> ContextOverflow | None:
    """None when `prompt` and an answer of `answer_tokens` fit `role`'s model; else the sizes.
    Checked before a run's first call, so that a large document is refused (or warned about)
    instead of being cut or refused by the provider midway."""
    needed = estimate_tokens(prompt) + answer_tokens
    limit = factory.context_tokens(role)
    return None if needed <= limit else ContextOverflow(needed=needed, limit=limit)


class ModelFactory:
    """Builds chat models per role: temperature, streaming with usage, timeout. The provider
    is "openai" (any OpenAI-compatible API: `ChatOpenAI`) unless an Agent model spec names
    another installed one ("deepseek": `ChatDeepSeek`, which keeps a reasoning model's
    `reasoning_content`); any other provider is refused. The model's stream comes in chunks
    at most 50 ms apart (`reqstudio.coalesce`).

    The SDK's own retries are off: every call is retried by its one policy in
    `reqstudio.calls` (`policy(role)`), so attempts are counted once and logged."""

    def __init__(self, settings: Settings, endpoint: Endpoint, thread: ThreadModel | None = None):
        self.settings = settings
        self.endpoint = endpoint
        self.thread = thread or ThreadModel()
        # The models this factory built, by role and options: an SRS run asks for a role's
        # model once per node, and a new one costs a client set-up per call (the SDK's
        # platform probe in a worker thread among it), between one answer and the next
        # request.
        self._models: dict[tuple, BaseChatOpenAI] = {}
        # The SDK clients of the models built, by provider, URL and key: every role on one
        # endpoint shares them (an SDK client learns the platform in a worker thread on its
        # first request).
        self._clients: dict[tuple, dict[str, Any]] = {}

    def endpoint_for(self, role: str) -> Endpoint:
        """Where `role`'s model lives. The judge ("evaluation") has its own provider when
        OPENAI_EVALUATION_BASE_URL or OPENAI_EVALUATION_API_KEY is set, each falling back to
        the main one; every other role uses the main endpoint."""
        s = self.settings
        if role != "evaluation" or (
            s.openai_evaluation_base_url is None and s.openai_evaluation_api_key is None
        ):
            return self.endpoint
        if s.openai_evaluation_base_url is None and self.endpoint.embedded:
            base_url = None  # a key of its own and no URL: OpenAI, as OPENAI_API_KEY alone is
        else:
            base_url = s.openai_evaluation_base_url or self.endpoint.base_url
        if s.openai_evaluation_api_key is not None:
            key = s.openai_evaluation_api_key.get_secret_value()
        else:
            key = NO_KEY if self.endpoint.embedded else self.endpoint.api_key
        model = s.openai_evaluation_model or (
            s.openai_model if self.endpoint.embedded else self.endpoint.model
        )
        return Endpoint(base_url, key, model)

    def model_name(self, role: ModelRole) -> str:
        if self.thread.spec is not None:
            return self.thread.spec.model
        if role == "evaluation" and self.settings.openai_evaluation_model:
            return self.settings.openai_evaluation_model
        return self.endpoint_for(role).model

    def uses_json_schema(self, role: str | None = None) -> bool:
        mode = self.settings.structured_output
        if mode == "auto":
            endpoint = self.endpoint if role is None else self.endpoint_for(role)
            spec = self.thread.spec if endpoint is self.endpoint else None
            elsewhere = spec is not None and (spec.provider != "openai" or spec.base_url)
            return endpoint.supports_json_schema and not elsewhere
        return mode == "json_schema"

    def response_format(
        self,
        schema: type[BaseModel],
        json_schema: dict[str, Any] | None = None,
        *,
        role: str | None = None,
    ) -> dict[str, Any] | None:
        """How to ask this provider (`role`'s, when given) for `schema` output; None where only
        the prompt can ask."""
        if not self.uses_json_schema(role):
            return None
        endpoint = self.endpoint if role is None else self.endpoint_for(role)
        dialect = "llama_cpp" if endpoint.embedded else "openai"
        return json_schema_format(schema, dialect=dialect, json_schema=json_schema)

    def context_tokens(self, role: ModelRole) -> int:
        """How many tokens the role's model takes in one request (prompt and answer)."""
        if self.settings.context_tokens is not None:
            return self.settings.context_tokens
        if self.endpoint_for(role).embedded:
            found = _declared_role(role)
            bound = found.offline_context_tokens if found is not None else EMBEDDED_CONTEXT_TOKENS
            return min(bound, EMBEDDED_CONTEXT_TOKENS)
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
    ) -> BaseChatOpenAI:
        """A chat model for one role. `spec` (Agent mode) overrides provider, model, URL, key
        and params; without one, the thread's chosen model does. A spec for another provider
        than "openai" does not inherit the app's OPENAI_BASE_URL / OPENAI_API_KEY: it uses its
        own, or that provider's defaults. The thread's temperature, when chosen, is every
        role's unless the caller names one. Without a spec, a role's model is built once per
        factory and copied with the caller's callbacks: the copy shares its HTTP client (and
        what the SDK learnt on the first call), and costs no validation."""
        if spec is not None:
            return self._build(role, callbacks, spec, temperature, streaming)
        key = (role, temperature, streaming)
        model = self._models.get(key)
        if model is None:
            model = self._models[key] = self._build(role, (), None, temperature, streaming)
        if not callbacks:
            return model
        return model.model_copy(update={"callbacks": list(callbacks)})

    def _build(
        self,
        role: ModelRole,
        callbacks: Sequence[BaseCallbackHandler],
        spec: ModelSpec | None,
        temperature: float | None,
        streaming: bool,
    ) -> BaseChatOpenAI:
        endpoint = self.endpoint_for(role)
        if endpoint is self.endpoint:  # a judge with its own provider keeps its own model
            spec = spec or self.thread.spec
        if temperature is None:
            temperature = self.thread.temperature
        provider = "openai"
        base_url: str | None = endpoint.base_url
        api_key: str | None = endpoint.api_key
        model = self.model_name(role)
        extra: dict = {}
        if spec is not None:
            provider = spec.provider
            model = spec.model
            if provider != "openai":
                base_url, api_key = None, None
            if spec.base_url:
                base_url = spec.base_url
            if spec.api_key is not None:
                api_key = spec.api_key.get_secret_value()
            if spec.temperature is not None and temperature is None:
                temperature = spec.temperature
            extra = dict(spec.params)
        elif endpoint.embedded:
            extra = {"extra_body": embedded_request_body(role)}
        if provider not in supported_providers():  # ModelSpec refuses these already
            raise SettingsError(f"provider {provider!r} is not supported")
        if base_url is not None:
            extra["base_url"] = base_url
        if api_key is not None:
            extra["api_key"] = api_key
        shared = None
        if set(extra) <= {"base_url", "api_key", "extra_body"}:  # no client option of its own
            shared = (provider, base_url, api_key)
        options: dict[str, Any] = {
            "model": model,
            "temperature": self.settings.temperature_for(role)
            if temperature is None
            else temperature,
            "streaming": streaming,
            "stream_usage": True,
            "stream_chunk_timeout": None,  # kept per stream by reqstudio.coalesce
            "timeout": self.settings.request_timeout,
            "max_retries": 0,
            "callbacks": list(callbacks) or None,
            "metadata": {"reqstudio_role": role, "reqstudio_model": model},
            "tags": [f"role:{role}"],
            **extra,
        }
        clients = self._clients.get(shared)
        if clients is None and provider == "openai" and api_key is not None:
            clients = _sync_clients_on_demand(provider, options)
        try:
            built = chat_model_class(provider)(**options, **(clients or {}))
        except ValidationError as exc:  # e.g. no API key for the provider; never echo input
            detail = exc.errors()[0].get("msg", "invalid") if exc.errors() else "invalid"
            raise SettingsError(f"cannot use the {provider} model {model!r}: {detail}") from None
        if shared is not None and shared not in self._clients and built.async_client is not None:
            self._clients[shared] = {
                name: getattr(built, name)
                for name in ("client", "async_client", "root_client", "root_async_client")
            }
        return built


class _OnDemand:
    """An SDK client built by `build` when first used, standing in for it meanwhile."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built: Any = None

    def _target(self) -> Any:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_build", "_built"):  # copy's probes: not a use
            raise AttributeError(name)
        return getattr(self._target(), name)


def _sync_clients_on_demand(provider: str, options: dict[str, Any]) -> dict[str, Any]:
    """The synchronous SDK client of a model, built on its first use. Every call ReqStudio
    makes is asynchronous, yet the model class builds both clients up front, each with its
    own certificate store: ~15 ms of CPU before a run's first request for a client no run
    uses. A synchronous call (`invoke`, `stream`) gets the client the model class would have
    built: that of a twin model with the same options (its async slots filled, so that it
    builds no second async client)."""
    root: list[Any] = []

    def root_client() -> Any:
        if not root:
            twin = chat_model_class(provider)(
                **options, async_client=_UNUSED, root_async_client=_UNUSED
            )
            root.append(twin.root_client)
        return root[0]

    return {
        "root_client": _OnDemand(root_client),
        "client": _OnDemand(lambda: root_client().chat.completions),
    }


_UNUSED = object()  # an async client slot filled so that the twin does not build one


def chat_model_class(provider: str) -> type[BaseChatOpenAI]:
    """LangChain's chat model class for `provider` (imported when first asked for), with its
    stream coalesced."""
    if provider == "deepseek":
        from langchain_deepseek import ChatDeepSeek

        return coalescing(ChatDeepSeek)
    from langchain_openai import ChatOpenAI

    return coalescing(ChatOpenAI)
