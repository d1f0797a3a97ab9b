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
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as SourceParseError

from reqstudio.settings_errors import (
    JSON_ERROR_PREFIX,
    describe_source_error,
    describe_validation_error,
)

ModelRole = Literal[
    "chat",
    "ReqParse",
    "ReqExplore",
    "ReqClarify",
    "DocGenerate",
    "evaluation",
    "function_call",
    "answer",
    "team",
    "RewriteOutline",
    "RewriteFill",
    "RewriteReview",
    "RewritePatch",
    "RewriteQuestions",
    "ReviewPanel",
    "ReviewAuthor",
]


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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # Provider (seed 000, "环境变量配置")
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "openai_base_url")
    )
    openai_model: str = Field(
        default="gpt-4o-mini", validation_alias=AliasChoices("OPENAI_MODEL", "openai_model")
    )
    openai_evaluation_model: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_EVALUATION_MODEL", "openai_evaluation_model"),
    )
    # The judge (role "evaluation") may live at another provider than the generator: its own
    # URL and key, each falling back to OPENAI_BASE_URL / OPENAI_API_KEY when unset.
    openai_evaluation_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_EVALUATION_BASE_URL", "openai_evaluation_base_url"),
    )
    openai_evaluation_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_EVALUATION_API_KEY", "openai_evaluation_api_key"),
    )
    # More models of the provider above a user may pick per thread in the settings panel
    # (comma-separated names), beside OPENAI_MODEL, OPENAI_EVALUATION_MODEL and the Agent models.
    model_choices: str = Field(default="", validation_alias=AliasChoices("REQSTUDIO_MODEL_CHOICES"))
    temp_reqparse: float = Field(
        default=0.2, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_REQPARSE")
    )
    temp_reqexplore: float = Field(
        default=0.6, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_REQEXPLORE")
    )
    temp_reqclarify: float = Field(
        default=0.2, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_REQCLARIFY")
    )
    temp_docgenerate: float = Field(
        default=0.1, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_DOCGENERATE")
    )
    temp_evaluation: float = Field(
        default=0.2, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_EVALUATION")
    )
    temp_chat: float = Field(
        default=0.7, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_CHAT")
    )
    request_timeout: float = Field(
        default=60.0, ge=1.0, le=600.0, validation_alias=AliasChoices("OPENAI_TIMEOUT")
    )
    context_tokens: int | None = Field(
        default=None, ge=1000, le=10_000_000, validation_alias=AliasChoices("OPENAI_CONTEXT_TOKENS")
    )
    max_retries: int | None = Field(
        default=None, ge=0, le=10, validation_alias=AliasChoices("OPENAI_MAX_RETRIES")
    )
    retry_backoff_scale: float = Field(
        default=1.0, ge=0.0, le=1.0, validation_alias=AliasChoices("REQSTUDIO_RETRY_BACKOFF_SCALE")
    )
    structured_output: Literal["auto", "json_schema", "prompt"] = Field(
        default="auto", validation_alias=AliasChoices("REQSTUDIO_STRUCTURED_OUTPUT")
    )

    # Agent mode (seed 002)
    agent_function_call_model: ModelSpec | None = Field(
        default=None, validation_alias=AliasChoices("AGENT_FUNCTION_CALL_MODEL")
    )
    agent_answer_model: ModelSpec | None = Field(
        default=None, validation_alias=AliasChoices("AGENT_ANSWER_MODEL")
    )
    agent_max_iterations: int = Field(
        default=5, ge=1, le=10, validation_alias=AliasChoices("AGENT_MAX_ITERATIONS")
    )
    agent_max_execution_time: int = Field(
        default=60, ge=10, le=300, validation_alias=AliasChoices("AGENT_MAX_EXECUTION_TIME")
    )
    agent_verbose: bool = Field(default=False, validation_alias=AliasChoices("AGENT_VERBOSE"))
    agent_prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, validation_alias=AliasChoices("AGENT_PRICES")
    )

    mcp_config: str | None = Field(
        default=None, validation_alias=AliasChoices("REQSTUDIO_MCP_CONFIG")
    )
    search_backend: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$",
        validation_alias=AliasChoices("REQSTUDIO_SEARCH_BACKEND"),
    )

    # The app's own
    data_dir: Path = Field(
        default=Path(".reqstudio"), validation_alias=AliasChoices("REQSTUDIO_DATA_DIR")
    )
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    )
    users: SecretStr | None = Field(default=None, validation_alias=AliasChoices("REQSTUDIO_USERS"))
    # Connections of one instance (reqstudio/pools.py): the data layer's pool and overflow,
    # the checkpointer's pool (PostgreSQL), and how long a request waits for a free one.
    db_pool_size: int = Field(
        default=5, ge=1, le=200, validation_alias=AliasChoices("REQSTUDIO_DB_POOL_SIZE")
    )
    db_pool_overflow: int = Field(
        default=5, ge=0, le=200, validation_alias=AliasChoices("REQSTUDIO_DB_POOL_OVERFLOW")
    )
    checkpoint_pool_size: int = Field(
        default=4, ge=1, le=200, validation_alias=AliasChoices("REQSTUDIO_CHECKPOINT_POOL_SIZE")
    )
    db_pool_timeout: float = Field(
        default=10.0, ge=1.0, le=120.0, validation_alias=AliasChoices("REQSTUDIO_DB_POOL_TIMEOUT")
    )
    # A run's lease (reqstudio/run_lease.py) lapses this long after its holder stopped renewing
    # it (renewed every third of it): how soon a run can be resumed after its instance died.
    run_lease_seconds: float = Field(
        default=10.0, ge=1.0, le=600.0, validation_alias=AliasChoices("REQSTUDIO_RUN_LEASE_SECONDS")
    )
    # Administrators besides the first account (comma-separated user names / identifiers).
    admins: str = Field(default="", validation_alias=AliasChoices("REQSTUDIO_ADMINS"))
    # Single sign-on: e-mail domains and groups whose members may sign in (empty: anyone the
    # identity provider signs in).
    sso_allowed_domains: str = Field(
        default="", validation_alias=AliasChoices("REQSTUDIO_SSO_ALLOWED_DOMAINS")
    )
    sso_allowed_groups: str = Field(
        default="", validation_alias=AliasChoices("REQSTUDIO_SSO_ALLOWED_GROUPS")
    )
    # Serving every visitor as the one local user beyond loopback must be asked for by name.
    allow_anonymous_network: bool = Field(
        default=False, validation_alias=AliasChoices("REQSTUDIO_ALLOW_ANONYMOUS_NETWORK")
    )
    mcp_user_servers: int = Field(
        default=3, ge=0, le=50, validation_alias=AliasChoices("REQSTUDIO_MCP_USER_SERVERS")
    )
    # A finished thread may be shared read-only with other signed-in users (Chainlit's
    # thread sharing: the thread menu's Share, a /share/<id> link). Off unless asked for.
    thread_sharing: bool = Field(
        default=False, validation_alias=AliasChoices("REQSTUDIO_THREAD_SHARING")
    )
    # Proxies that authenticate users and name them in a header (X-Forwarded-User): their
    # addresses or networks, comma-separated. Empty: the header is trusted from nobody.
    trusted_proxies: str = Field(
        default="", validation_alias=AliasChoices("REQSTUDIO_TRUSTED_PROXIES")
    )
    proxy_user_header: str = Field(
        default="X-Forwarded-User", validation_alias=AliasChoices("REQSTUDIO_PROXY_USER_HEADER")
    )
    # MCP tools that change nothing, besides those whose server says so (readOnlyHint):
    # `server:tool`, `server:*` or `tool`, comma-separated. Any other MCP tool asks first.
    mcp_read_only_tools: str = Field(
        default="", validation_alias=AliasChoices("REQSTUDIO_MCP_READ_ONLY_TOOLS")
    )
    # Origins besides the app's own whose browser requests it accepts (comma-separated).
    allowed_origins: str = Field(
        default="", validation_alias=AliasChoices("REQSTUDIO_ALLOWED_ORIGINS")
    )
    local_model_file: Path | None = Field(
        default=None, validation_alias=AliasChoices("REQSTUDIO_LOCAL_MODEL_FILE")
    )
    # One core is left to the app and the browser: llama.cpp's threads wait on each other, so
    # with one of them preempted a token takes several times longer (README, offline model).
    local_model_threads: int = Field(
        default_factory=lambda: max(1, usable_cpus() - 1),
        ge=1,
        le=64,
        validation_alias=AliasChoices("REQSTUDIO_LOCAL_MODEL_THREADS"),
    )
    loop_monitor: Literal["0", "1", "trace"] = Field(
        default="0", validation_alias=AliasChoices("REQSTUDIO_LOOP_MONITOR")
    )
    srs_max_iterations: int = Field(
        default=5, ge=1, le=20, validation_alias=AliasChoices("SRS_MAX_ITERATIONS")
    )
    # "ears": ReqExplore and DocGenerate phrase requirements in the EARS templates
    srs_requirement_style: Literal["plain", "ears"] = Field(
        default="plain", validation_alias=AliasChoices("SRS_REQUIREMENT_STYLE")
    )
    # Rewrite mode (seed 003)
    temp_rewrite: float = Field(
        default=0.3, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_REWRITE")
    )
    rewrite_max_review_rounds: int = Field(
        default=3, ge=0, le=10, validation_alias=AliasChoices("REWRITE_MAX_REVIEW_ROUNDS")
    )
    rewrite_reviewer: Literal["expert", "panel"] = Field(
        default="expert", validation_alias=AliasChoices("REWRITE_REVIEWER")
    )
    rewrite_max_questions: int = Field(
        default=5, ge=0, le=10, validation_alias=AliasChoices("REWRITE_MAX_QUESTIONS")
    )
    reference_max_mb: float = Field(
        default=10.0, gt=0, le=100, validation_alias=AliasChoices("REQSTUDIO_REFERENCE_MAX_MB")
    )

    # Where thread files live (ui/storage.py): auto is s3 with a bucket, database with a
    # PostgreSQL URL, local otherwise.
    storage: Literal["auto", "local", "database", "s3"] = Field(
        default="auto", validation_alias=AliasChoices("REQSTUDIO_STORAGE")
    )
    s3_bucket: str | None = Field(
        default=None, validation_alias=AliasChoices("REQSTUDIO_S3_BUCKET")
    )
    s3_endpoint_url: str | None = Field(
        default=None, validation_alias=AliasChoices("REQSTUDIO_S3_ENDPOINT_URL")
    )
    # One stored file at most (downloads, uploaded references, charts); not below
    # REQSTUDIO_REFERENCE_MAX_MB, so that every reference the app accepts can be kept.
    file_max_mb: float = Field(
        default=20.0, gt=0, le=1024, validation_alias=AliasChoices("REQSTUDIO_FILE_MAX_MB")
    )
    file_types: str = Field(
        default=(
            "text/markdown,text/plain,text/csv,application/json,application/pdf,"
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document,"
            "application/octet-stream,image/png,image/jpeg,image/gif,image/webp"
        ),
        validation_alias=AliasChoices("REQSTUDIO_FILE_TYPES"),
    )
    database_files_max_mb: float = Field(
        default=2048.0, gt=0, validation_alias=AliasChoices("REQSTUDIO_DATABASE_FILES_MAX_MB")
    )

    # Review mode (seed 001)
    review_max_rounds: int = Field(
        default=3, ge=1, le=10, validation_alias=AliasChoices("REVIEW_MAX_ROUNDS")
    )
    review_pause_after_round: bool = Field(
        default=False, validation_alias=AliasChoices("REVIEW_PAUSE_AFTER_ROUND")
    )
    temp_review: float = Field(
        default=0.2, ge=0.0, le=2.0, validation_alias=AliasChoices("OPENAI_TEMP_REVIEW")
    )

    # Team mode (seed 004)
    team_max_agents: int = Field(
        default=8, ge=2, le=32, validation_alias=AliasChoices("TEAM_MAX_AGENTS")
    )
    team_max_messages: int = Field(
        default=100, ge=5, le=2000, validation_alias=AliasChoices("TEAM_MAX_MESSAGES")
    )
    team_max_depth: int = Field(
        default=3, ge=1, le=8, validation_alias=AliasChoices("TEAM_MAX_DEPTH")
    )
    team_max_execution_time: int = Field(
        default=300, ge=10, le=3600, validation_alias=AliasChoices("TEAM_MAX_EXECUTION_TIME")
    )
    team_max_tokens: int = Field(
        default=300_000, ge=1000, le=50_000_000, validation_alias=AliasChoices("TEAM_MAX_TOKENS")
    )
    team_max_steps_per_turn: int = Field(
        default=8, ge=1, le=50, validation_alias=AliasChoices("TEAM_MAX_STEPS_PER_TURN")
    )
    team_temperature: float = Field(
        default=0.3, ge=0.0, le=2.0, validation_alias=AliasChoices("TEAM_TEMPERATURE")
    )

    @field_validator("openai_api_key", "openai_evaluation_api_key")
    @classmethod
    def _real_key(cls, value: SecretStr | None) -> SecretStr | None:
        # `chainlit run` under CI=true sets this placeholder; it is no provider.
        if value is None or value.get_secret_value() in ("", CHAINLIT_CI_FAKE_KEY):
            return None
        return value

    @field_validator("openai_base_url", "openai_evaluation_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

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
        if value in (None, ""):
            return None
        if not value.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
            raise ValueError("must start with sqlite+aiosqlite:// or postgresql+asyncpg://")
        return value

    @field_validator("s3_endpoint_url")
    @classmethod
    def _endpoint_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

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
        return {
            "chat": self.temp_chat,
            "ReqParse": self.temp_reqparse,
            "ReqExplore": self.temp_reqexplore,
            "ReqClarify": self.temp_reqclarify,
            "DocGenerate": self.temp_docgenerate,
            "evaluation": self.temp_evaluation,
            "function_call": 0.0,
            "answer": self.temp_chat,
            "team": self.team_temperature,
            "RewriteOutline": self.temp_rewrite,
            "RewriteFill": self.temp_rewrite,
            "RewriteReview": min(self.temp_rewrite, self.temp_evaluation),
            "RewritePatch": self.temp_rewrite,
            "RewriteQuestions": self.temp_rewrite,
            "ReviewPanel": self.temp_review,
            "ReviewAuthor": self.temp_rewrite,
        }[role]


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
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(describe_validation_error(exc, Settings.model_fields)) from None
    except SourceParseError as exc:
        raise SettingsError(describe_source_error(exc, Settings.model_fields)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
