"""Configuration from the environment and `.env`, validated once at start-up.

Variable names, defaults and ranges follow the design documents (seeds 000 and 002);
the `REQSTUDIO_*` variables are the app's own.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as SourceParseError

from reqstudio import model_roles
from reqstudio.model_roles import Temperature, UnknownRole
from reqstudio.settings_errors import (
    JSON_ERROR_PREFIX,
    describe_source_error,
    describe_validation_error,
)

# A model role: each mode declares its own (`reqstudio.model_roles`, its package's `roles`
# module), with its temperature variable, retry policy and offline-model bounds.
ModelRole = str


# Providers a model spec may name: LangChain's provider key -> the package that serves it.
# Only those whose package is installed are allowed (both come with ReqStudio). "openai" is
# any OpenAI-compatible API; "deepseek" (ChatDeepSeek) also keeps a reasoning model's
# `reasoning_content` (DeepSeek-R1, or Qwen and others on an OpenAI-compatible base_url).
PROVIDER_PACKAGES: dict[str, str] = {"openai": "langchain_openai", "deepseek": "langchain_deepseek"}


@cache
def supported_providers() -> tuple[str, ...]:
    """Looked up once: each look-up searches the import path on disk, and a model is built
    per role between one answer and the next request."""
    return tuple(p for p, module in PROVIDER_PACKAGES.items() if importlib.util.find_spec(module))


class ModelSpec(BaseModel):
    """One model as `AGENT_FUNCTION_CALL_MODEL` / `AGENT_ANSWER_MODEL` describe it (JSON)."""

    model_config = ConfigDict(extra="forbid")

    provider: str = "openai"
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        value = value.strip().lower()
        allowed = supported_providers()
        if value not in allowed:
            raise ValueError(
                f"provider {value!r} is not supported (use one of: {', '.join(allowed)})"
            )
        return value


CHAINLIT_CI_FAKE_KEY = "sk-FAKE-OPENAI-API-KEY"


def _comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


class SettingsError(ValueError):
    """A configuration value is not allowed; the message is one line for the user."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _url_with_scheme(value: str | None, schemes: tuple[str, ...]) -> str | None:
    """An empty URL is none; any other starts with one of `schemes`."""
    if value in (None, ""):
        return None
    if not value.startswith(schemes):
        raise ValueError(f"must start with {' or '.join(schemes)}")
    return value


def env(*variables: str, default: Any = None, **rules: Any) -> Any:
    """A setting read from the first of `variables` that is set (`default` otherwise), with
    `rules` (bounds, a pattern, a `default_factory`) as `pydantic.Field` takes them."""
    if "default_factory" not in rules:
        rules["default"] = default
    return Field(validation_alias=AliasChoices(*variables), **rules)


class CoreSettings(BaseSettings):
    """Every setting but the roles' temperatures, which the modes declare (`Settings`)."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # Provider (seed 000, "环境变量配置")
    openai_api_key: SecretStr | None = env("OPENAI_API_KEY", "openai_api_key")
    openai_base_url: str | None = env("OPENAI_BASE_URL", "openai_base_url")
    openai_model: str = env("OPENAI_MODEL", "openai_model", default="gpt-4o-mini")
    openai_evaluation_model: str | None = env("OPENAI_EVALUATION_MODEL", "openai_evaluation_model")
    # The judge (role "evaluation") may live at another provider than the generator: its own
    # URL and key, each falling back to OPENAI_BASE_URL / OPENAI_API_KEY when unset.
    openai_evaluation_base_url: str | None = env(
        "OPENAI_EVALUATION_BASE_URL", "openai_evaluation_base_url"
    )
    openai_evaluation_api_key: SecretStr | None = env(
        "OPENAI_EVALUATION_API_KEY", "openai_evaluation_api_key"
    )
    # More models of the provider above a user may pick per thread in the settings panel
    # (comma-separated names), beside OPENAI_MODEL, OPENAI_EVALUATION_MODEL and the Agent models.
    model_choices: str = env("REQSTUDIO_MODEL_CHOICES", default="")
    request_timeout: float = env("OPENAI_TIMEOUT", default=60.0, ge=1.0, le=600.0)
    context_tokens: int | None = env("OPENAI_CONTEXT_TOKENS", ge=1000, le=10_000_000)
    max_retries: int | None = env("OPENAI_MAX_RETRIES", ge=0, le=10)
    retry_backoff_scale: float = env("REQSTUDIO_RETRY_BACKOFF_SCALE", default=1.0, ge=0.0, le=1.0)
    structured_output: Literal["auto", "json_schema", "prompt"] = env(
        "REQSTUDIO_STRUCTURED_OUTPUT", default="auto"
    )

    # Agent mode (seed 002)
    agent_function_call_model: ModelSpec | None = env("AGENT_FUNCTION_CALL_MODEL")
    agent_answer_model: ModelSpec | None = env("AGENT_ANSWER_MODEL")
    agent_max_iterations: int = env("AGENT_MAX_ITERATIONS", default=5, ge=1, le=10)
    agent_max_execution_time: int = env("AGENT_MAX_EXECUTION_TIME", default=60, ge=10, le=300)
    agent_verbose: bool = env("AGENT_VERBOSE", default=False)
    agent_prices: dict[str, tuple[float, float]] = env("AGENT_PRICES", default_factory=dict)

    mcp_config: str | None = env("REQSTUDIO_MCP_CONFIG")
    search_backend: str | None = env(
        "REQSTUDIO_SEARCH_BACKEND", pattern=r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$"
    )

    # The app's own
    data_dir: Path = env("REQSTUDIO_DATA_DIR", default=Path(".reqstudio"))
    database_url: str | None = env("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    users: SecretStr | None = env("REQSTUDIO_USERS")
    # Connections of one instance (reqstudio/pools.py): the data layer's pool and overflow,
    # the checkpointer's pool (PostgreSQL), and how long a request waits for a free one.
    db_pool_size: int = env("REQSTUDIO_DB_POOL_SIZE", default=5, ge=1, le=200)
    db_pool_overflow: int = env("REQSTUDIO_DB_POOL_OVERFLOW", default=5, ge=0, le=200)
    checkpoint_pool_size: int = env("REQSTUDIO_CHECKPOINT_POOL_SIZE", default=4, ge=1, le=200)
    db_pool_timeout: float = env("REQSTUDIO_DB_POOL_TIMEOUT", default=10.0, ge=1.0, le=120.0)
    # A run's lease (reqstudio/run_lease.py) lapses this long after its holder stopped renewing
    # it (renewed every third of it): how soon a run can be resumed after its instance died.
    run_lease_seconds: float = env("REQSTUDIO_RUN_LEASE_SECONDS", default=10.0, ge=1.0, le=600.0)
    # Administrators besides the accounts made with `--admin` (comma-separated user names /
    # identifiers); nobody administers by being the first account.
    admins: str = env("REQSTUDIO_ADMINS", default="")
    # Single sign-on: e-mail domains (a verified e-mail) and groups whose members sign in; any
    # other identity is refused. With neither, a new identity waits for an administrator's
    # approval.
    sso_allowed_domains: str = env("REQSTUDIO_SSO_ALLOWED_DOMAINS", default="")
    sso_allowed_groups: str = env("REQSTUDIO_SSO_ALLOWED_GROUPS", default="")
    # Serving every visitor as the one local user beyond loopback must be asked for by name.
    allow_anonymous_network: bool = env("REQSTUDIO_ALLOW_ANONYMOUS_NETWORK", default=False)
    mcp_user_servers: int = env("REQSTUDIO_MCP_USER_SERVERS", default=3, ge=0, le=50)
    # A finished thread may be shared read-only with other signed-in users (Chainlit's
    # thread sharing: the thread menu's Share, a /share/<id> link). Off unless asked for.
    thread_sharing: bool = env("REQSTUDIO_THREAD_SHARING", default=False)
    # Proxies that authenticate users and name them in a header (X-Forwarded-User): their
    # addresses or networks, comma-separated. Empty: the header is trusted from nobody.
    trusted_proxies: str = env("REQSTUDIO_TRUSTED_PROXIES", default="")
    proxy_user_header: str = env("REQSTUDIO_PROXY_USER_HEADER", default="X-Forwarded-User")
    # MCP tools that change nothing, besides those whose server says so (readOnlyHint):
    # `server:tool`, `server:*` or `tool`, comma-separated. Any other MCP tool asks first.
    mcp_read_only_tools: str = env("REQSTUDIO_MCP_READ_ONLY_TOOLS", default="")
    # Origins besides the app's own whose browser requests it accepts (comma-separated).
    allowed_origins: str = env("REQSTUDIO_ALLOWED_ORIGINS", default="")
    local_model_file: Path | None = env("REQSTUDIO_LOCAL_MODEL_FILE")
    # One core is left to the app and the browser: llama.cpp's threads wait on each other, so
    # with one of them preempted a token takes several times longer (README, offline model).
    local_model_threads: int = env(
        "REQSTUDIO_LOCAL_MODEL_THREADS",
        default_factory=lambda: max(1, usable_cpus() - 1),
        ge=1,
        le=64,
    )
    loop_monitor: Literal["0", "1", "trace"] = env("REQSTUDIO_LOOP_MONITOR", default="0")
    # The web app changes Chainlit's internals (reqstudio/web/chainlit_seam.py) for the version
    # pinned in pyproject.toml; on another version it refuses to start unless this is on.
    chainlit_any_version: bool = env("REQSTUDIO_CHAINLIT_ANY_VERSION", default=False)
    srs_max_iterations: int = env("SRS_MAX_ITERATIONS", default=5, ge=1, le=20)
    # "ears": ReqExplore and DocGenerate phrase requirements in the EARS templates
    srs_requirement_style: Literal["plain", "ears"] = env("SRS_REQUIREMENT_STYLE", default="plain")
    # Rewrite mode (seed 003)
    rewrite_max_review_rounds: int = env("REWRITE_MAX_REVIEW_ROUNDS", default=3, ge=0, le=10)
    rewrite_reviewer: Literal["expert", "panel"] = env("REWRITE_REVIEWER", default="expert")
    rewrite_max_questions: int = env("REWRITE_MAX_QUESTIONS", default=5, ge=0, le=10)
    reference_max_mb: float = env("REQSTUDIO_REFERENCE_MAX_MB", default=10.0, gt=0, le=100)

    # Where thread files live (reqstudio/web/storage.py): auto is s3 with a bucket, database with a
    # PostgreSQL URL, local otherwise.
    storage: Literal["auto", "local", "database", "s3"] = env("REQSTUDIO_STORAGE", default="auto")
    s3_bucket: str | None = env("REQSTUDIO_S3_BUCKET")
    s3_endpoint_url: str | None = env("REQSTUDIO_S3_ENDPOINT_URL")
    # One stored file at most (downloads, uploaded references, charts); not below
    # REQSTUDIO_REFERENCE_MAX_MB, so that every reference the app accepts can be kept.
    file_max_mb: float = env("REQSTUDIO_FILE_MAX_MB", default=20.0, gt=0, le=1024)
    file_types: str = env(
        "REQSTUDIO_FILE_TYPES",
        default=(
            "text/markdown,text/plain,text/csv,application/json,application/pdf,"
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document,"
            "application/octet-stream,image/png,image/jpeg,image/gif,image/webp"
        ),
    )
    database_files_max_mb: float = env("REQSTUDIO_DATABASE_FILES_MAX_MB", default=2048.0, gt=0)

    # Review mode (seed 001)
    review_max_rounds: int = env("REVIEW_MAX_ROUNDS", default=3, ge=1, le=10)
    review_pause_after_round: bool = env("REVIEW_PAUSE_AFTER_ROUND", default=False)

    # Team mode (seed 004)
    team_max_agents: int = env("TEAM_MAX_AGENTS", default=8, ge=2, le=32)
    team_max_messages: int = env("TEAM_MAX_MESSAGES", default=100, ge=5, le=2000)
    team_max_depth: int = env("TEAM_MAX_DEPTH", default=3, ge=1, le=8)
    team_max_execution_time: int = env("TEAM_MAX_EXECUTION_TIME", default=300, ge=10, le=3600)
    team_max_tokens: int = env("TEAM_MAX_TOKENS", default=300_000, ge=1000, le=50_000_000)
    team_max_steps_per_turn: int = env("TEAM_MAX_STEPS_PER_TURN", default=8, ge=1, le=50)

    @field_validator("openai_api_key", "openai_evaluation_api_key")
    @classmethod
    def _real_key(cls, value: SecretStr | None) -> SecretStr | None:
        # `chainlit run` under CI=true sets this placeholder; it is no provider.
        if value is None or value.get_secret_value() in ("", CHAINLIT_CI_FAKE_KEY):
            return None
        return value

    @field_validator("openai_base_url", "openai_evaluation_base_url", "s3_endpoint_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        url = _url_with_scheme(value, ("http://", "https://"))
        return url.rstrip("/") if url else None

    @field_validator("agent_function_call_model", "agent_answer_model", mode="before")
    @classmethod
    def _model_spec_json(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_json_setting(value) if value.strip() else None
        return value

    @field_validator("agent_prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> Any:
        """`{"model": [in_per_1k, out_per_1k]}` or `{"model": {"input": .., "output": ..}}`."""
        if isinstance(value, str):
            value = parse_json_setting(value) if value.strip() else {}
        if isinstance(value, dict):
            return {
                model: (price["input"], price["output"]) if isinstance(price, dict) else price
                for model, price in value.items()
            }
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        return _url_with_scheme(value, ("sqlite+aiosqlite://", "postgresql+asyncpg://"))

    @model_validator(mode="after")
    def _storage_fits(self) -> Settings:
        if self.file_max_mb < self.reference_max_mb:
            raise ValueError(
                f"REQSTUDIO_FILE_MAX_MB ({self.file_max_mb:g}) is below "
                f"REQSTUDIO_REFERENCE_MAX_MB ({self.reference_max_mb:g}): accepted references "
                "could not be kept"
            )
        if self.storage == "s3" and not self.s3_bucket:
            raise ValueError("REQSTUDIO_STORAGE=s3 needs REQSTUDIO_S3_BUCKET")
        return self

    @field_validator("trusted_proxies")
    @classmethod
    def _trusted_proxies(cls, value: str) -> str:
        for entry in _comma_list(value):
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"REQSTUDIO_TRUSTED_PROXIES: {entry!r} is not an address or network"
                ) from None
        return value

    @field_validator("users")
    @classmethod
    def _users(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        parse_users(value.get_secret_value())
        return value

    # --- derived values -------------------------------------------------

    @property
    def uses_embedded_model(self) -> bool:
        """No provider configured: the bundled offline model answers."""
        return self.openai_api_key is None and self.openai_base_url is None

    @property
    def model_choice_list(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(_comma_list(self.model_choices)))

    @property
    def allowed_origin_list(self) -> tuple[str, ...]:
        return tuple(o.strip() for o in self.allowed_origins.split(",") if o.strip())

    @property
    def trusted_proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return tuple(
            ipaddress.ip_network(e, strict=False) for e in _comma_list(self.trusted_proxies)
        )

    @property
    def mcp_read_only_names(self) -> frozenset[str]:
        return frozenset(_comma_list(self.mcp_read_only_tools))

    @property
    def file_type_list(self) -> tuple[str, ...]:
        return tuple(t.strip().lower() for t in self.file_types.split(",") if t.strip())

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir.resolve()}/history.db"

    @property
    def admin_names(self) -> frozenset[str]:
        return frozenset(_comma_list(self.admins))

    @property
    def sso_domains(self) -> frozenset[str]:
        return frozenset(d.lower().lstrip("@") for d in _comma_list(self.sso_allowed_domains))

    @property
    def sso_groups(self) -> frozenset[str]:
        return frozenset(_comma_list(self.sso_allowed_groups))

    @property
    def user_passwords(self) -> dict[str, str]:
        return parse_users(self.users.get_secret_value()) if self.users else {}

    def temperature_for(self, role: ModelRole) -> float:
        """The temperature `role`'s mode declares for it, read from its variable(s);
        `UnknownRole` for a role no registered mode declares."""
        return model_roles.temperature_of(model_roles.role(role), self._read_temperature)

    def _read_temperature(self, temperature: Temperature) -> float:
        value = getattr(self, temperature.attribute, None)
        if value is None:  # a mode registered after these settings were read
            raise UnknownRole(
                f"{temperature.variable} is declared by a mode registered after these settings "
                "were read: read them again (load_settings)"
            )
        return value


def _temperature_field(temperature: Temperature) -> tuple[type, Any]:
    return float, env(temperature.variable, default=temperature.default, ge=0.0, le=2.0)


def _with_temperatures(
    base: type[CoreSettings], temperatures: tuple[Temperature, ...]
) -> type[CoreSettings]:
    return create_model(
        "Settings",
        __base__=base,
        __module__=__name__,
        __doc__="Configuration: the core's settings and the temperature variables of the roles "
        "the registered modes declare (`reqstudio.model_roles`).",
        **{t.attribute: _temperature_field(t) for t in temperatures},
    )


Settings = _with_temperatures(CoreSettings, tuple(model_roles.declared().temperatures.values()))


@lru_cache(maxsize=8)
def _extended(temperatures: tuple[Temperature, ...]) -> type[CoreSettings]:
    return _with_temperatures(Settings, temperatures)


def settings_class() -> type[CoreSettings]:
    """`Settings`, or a subclass with the temperature variables of modes registered since it was
    built (a mode registered at run time: a plugin, a test)."""
    later = tuple(
        t
        for t in model_roles.declared().temperatures.values()
        if t.attribute not in Settings.model_fields
    )
    return _extended(later) if later else Settings


def parse_json_setting(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{JSON_ERROR_PREFIX}{exc})") from None


def parse_users(raw: str) -> dict[str, str]:
    """`REQSTUDIO_USERS="alice:secret1,bob:secret2"` -> {"alice": "secret1", ...}."""
    users: dict[str, str] = {}
    for entry in raw.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, password = entry.partition(":")
        if not sep or not name.strip() or not password:
            raise ValueError("must be a comma-separated list of name:password")
        users[name.strip()] = password
    return users


def load_settings(**overrides: Any) -> Settings:
    """Read settings; raise `SettingsError` with a one-line message on a bad value."""
    cls = settings_class()
    try:
        return cls(**overrides)
    except ValidationError as exc:
        raise SettingsError(describe_validation_error(exc, cls.model_fields)) from None
    except SourceParseError as exc:
        raise SettingsError(describe_source_error(exc, cls.model_fields)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
