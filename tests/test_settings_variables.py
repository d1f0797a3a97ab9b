"""Every environment variable keeps its name, its attribute, its default and its range, and
every role keeps its temperature, its retry policy and its bounds on the offline model, however
the settings are assembled (the roles are declared by the modes that own them)."""

from __future__ import annotations

import pytest
from pydantic import AliasChoices

from reqstudio.calls import RetryPolicy, policy_for
from reqstudio.llm import embedded_request_body
from reqstudio.settings import Settings, load_settings

# (names the variable is read under, attribute, default, range) as they were before the roles
# moved into the modes; "factory": computed when read.
VARIABLES = [
    (("OPENAI_API_KEY", "openai_api_key"), "openai_api_key", None, {}),
    (("OPENAI_BASE_URL", "openai_base_url"), "openai_base_url", None, {}),
    (("OPENAI_MODEL", "openai_model"), "openai_model", "gpt-4o-mini", {}),
    (("OPENAI_EVALUATION_MODEL", "openai_evaluation_model"), "openai_evaluation_model", None, {}),
    (
        ("OPENAI_EVALUATION_BASE_URL", "openai_evaluation_base_url"),
        "openai_evaluation_base_url",
        None,
        {},
    ),
    (
        ("OPENAI_EVALUATION_API_KEY", "openai_evaluation_api_key"),
        "openai_evaluation_api_key",
        None,
        {},
    ),
    (("REQSTUDIO_MODEL_CHOICES",), "model_choices", "", {}),
    (("OPENAI_TEMP_REQPARSE",), "temp_reqparse", 0.2, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TEMP_REQEXPLORE",), "temp_reqexplore", 0.6, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TEMP_REQCLARIFY",), "temp_reqclarify", 0.2, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TEMP_DOCGENERATE",), "temp_docgenerate", 0.1, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TEMP_EVALUATION",), "temp_evaluation", 0.2, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TEMP_CHAT",), "temp_chat", 0.7, {"ge": 0.0, "le": 2.0}),
    (("OPENAI_TIMEOUT",), "request_timeout", 60.0, {"ge": 1.0, "le": 600.0}),
    (("OPENAI_CONTEXT_TOKENS",), "context_tokens", None, {"ge": 1000, "le": 10000000}),
    (("OPENAI_MAX_RETRIES",), "max_retries", None, {"ge": 0, "le": 10}),
    (("REQSTUDIO_RETRY_BACKOFF_SCALE",), "retry_backoff_scale", 1.0, {"ge": 0.0, "le": 1.0}),
    (("REQSTUDIO_STRUCTURED_OUTPUT",), "structured_output", "auto", {}),
    (("AGENT_FUNCTION_CALL_MODEL",), "agent_function_call_model", None, {}),
    (("AGENT_ANSWER_MODEL",), "agent_answer_model", None, {}),
    (("AGENT_MAX_ITERATIONS",), "agent_max_iterations", 5, {"ge": 1, "le": 10}),
    (("AGENT_MAX_EXECUTION_TIME",), "agent_max_execution_time", 60, {"ge": 10, "le": 300}),
    (("AGENT_VERBOSE",), "agent_verbose", False, {}),
    (("AGENT_PRICES",), "agent_prices", "factory", {}),
    (("REQSTUDIO_MCP_CONFIG",), "mcp_config", None, {}),
    (("REQSTUDIO_SEARCH_BACKEND",), "search_backend", None, {}),
    (("REQSTUDIO_DATA_DIR",), "data_dir", ".reqstudio", {}),
    (("REQSTUDIO_DATABASE_URL", "DATABASE_URL"), "database_url", None, {}),
    (("REQSTUDIO_USERS",), "users", None, {}),
    (("REQSTUDIO_DB_POOL_SIZE",), "db_pool_size", 5, {"ge": 1, "le": 200}),
    (("REQSTUDIO_DB_POOL_OVERFLOW",), "db_pool_overflow", 5, {"ge": 0, "le": 200}),
    (("REQSTUDIO_CHECKPOINT_POOL_SIZE",), "checkpoint_pool_size", 4, {"ge": 1, "le": 200}),
    (("REQSTUDIO_DB_POOL_TIMEOUT",), "db_pool_timeout", 10.0, {"ge": 1.0, "le": 120.0}),
    (("REQSTUDIO_RUN_LEASE_SECONDS",), "run_lease_seconds", 10.0, {"ge": 1.0, "le": 600.0}),
    (("REQSTUDIO_ADMINS",), "admins", "", {}),
    (("REQSTUDIO_SSO_ALLOWED_DOMAINS",), "sso_allowed_domains", "", {}),
    (("REQSTUDIO_SSO_ALLOWED_GROUPS",), "sso_allowed_groups", "", {}),
    (("REQSTUDIO_ALLOW_ANONYMOUS_NETWORK",), "allow_anonymous_network", False, {}),
    (("REQSTUDIO_MCP_USER_SERVERS",), "mcp_user_servers", 3, {"ge": 0, "le": 50}),
    (("REQSTUDIO_THREAD_SHARING",), "thread_sharing", False, {}),
    (("REQSTUDIO_TRUSTED_PROXIES",), "trusted_proxies", "", {}),
    (("REQSTUDIO_PROXY_USER_HEADER",), "proxy_user_header", "X-Forwarded-User", {}),
    (("REQSTUDIO_MCP_READ_ONLY_TOOLS",), "mcp_read_only_tools", "", {}),
    (("REQSTUDIO_ALLOWED_ORIGINS",), "allowed_origins", "", {}),
    (("REQSTUDIO_LOCAL_MODEL_FILE",), "local_model_file", None, {}),
    (("REQSTUDIO_LOCAL_MODEL_THREADS",), "local_model_threads", "factory", {"ge": 1, "le": 64}),
    (("REQSTUDIO_LOOP_MONITOR",), "loop_monitor", "0", {}),
    (("REQSTUDIO_CHAINLIT_ANY_VERSION",), "chainlit_any_version", False, {}),
    (("SRS_MAX_ITERATIONS",), "srs_max_iterations", 5, {"ge": 1, "le": 20}),
    (("SRS_REQUIREMENT_STYLE",), "srs_requirement_style", "plain", {}),
    (("OPENAI_TEMP_REWRITE",), "temp_rewrite", 0.3, {"ge": 0.0, "le": 2.0}),
    (("REWRITE_MAX_REVIEW_ROUNDS",), "rewrite_max_review_rounds", 3, {"ge": 0, "le": 10}),
    (("REWRITE_REVIEWER",), "rewrite_reviewer", "expert", {}),
    (("REWRITE_MAX_QUESTIONS",), "rewrite_max_questions", 5, {"ge": 0, "le": 10}),
    (("REQSTUDIO_REFERENCE_MAX_MB",), "reference_max_mb", 10.0, {"gt": 0, "le": 100}),
    (("REQSTUDIO_STORAGE",), "storage", "auto", {}),
    (("REQSTUDIO_S3_BUCKET",), "s3_bucket", None, {}),
    (("REQSTUDIO_S3_ENDPOINT_URL",), "s3_endpoint_url", None, {}),
    (("REQSTUDIO_FILE_MAX_MB",), "file_max_mb", 20.0, {"gt": 0, "le": 1024}),
    (
        ("REQSTUDIO_FILE_TYPES",),
        "file_types",
        "text/markdown,text/plain,text/csv,application/json,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/octet-stream,image/png,image/jpeg,image/gif,image/webp",
        {},
    ),
    (("REQSTUDIO_DATABASE_FILES_MAX_MB",), "database_files_max_mb", 2048.0, {"gt": 0}),
    (("REVIEW_MAX_ROUNDS",), "review_max_rounds", 3, {"ge": 1, "le": 10}),
    (("REVIEW_PAUSE_AFTER_ROUND",), "review_pause_after_round", False, {}),
    (("OPENAI_TEMP_REVIEW",), "temp_review", 0.2, {"ge": 0.0, "le": 2.0}),
    (("TEAM_MAX_AGENTS",), "team_max_agents", 8, {"ge": 2, "le": 32}),
    (("TEAM_MAX_MESSAGES",), "team_max_messages", 100, {"ge": 5, "le": 2000}),
    (("TEAM_MAX_DEPTH",), "team_max_depth", 3, {"ge": 1, "le": 8}),
    (("TEAM_MAX_EXECUTION_TIME",), "team_max_execution_time", 300, {"ge": 10, "le": 3600}),
    (("TEAM_MAX_TOKENS",), "team_max_tokens", 300000, {"ge": 1000, "le": 50000000}),
    (("TEAM_MAX_STEPS_PER_TURN",), "team_max_steps_per_turn", 8, {"ge": 1, "le": 50}),
    (("TEAM_TEMPERATURE",), "team_temperature", 0.3, {"ge": 0.0, "le": 2.0}),
    # the acceptance-test writer's (`reqstudio tests generate`), added with the role
    (("OPENAI_TEMP_ACCEPTANCE",), "temp_acceptance", 0.2, {"ge": 0.0, "le": 2.0}),
]


def _bounds(field) -> dict[str, float]:
    return {
        k: getattr(m, k) for m in field.metadata for k in ("ge", "gt", "le", "lt") if hasattr(m, k)
    }


def test_every_variable_keeps_its_name_default_and_range():
    now = []
    for name, field in Settings.model_fields.items():
        assert isinstance(field.validation_alias, AliasChoices), name
        default = "factory" if field.default_factory else field.default
        default = str(default) if hasattr(default, "__fspath__") else default
        now.append((tuple(field.validation_alias.choices), name, default, _bounds(field)))
    key = lambda row: row[1]  # noqa: E731
    assert sorted(now, key=key) == sorted(VARIABLES, key=key)


ROLES = (
    "chat", "ReqParse", "ReqExplore", "ReqClarify", "DocGenerate", "evaluation", "function_call",
    "answer", "team", "RewriteOutline", "RewriteFill", "RewriteReview", "RewritePatch",
    "RewriteQuestions", "ReviewPanel", "ReviewAuthor",
)  # fmt: skip

DEFAULT_TEMPERATURES = {
    "chat": 0.7, "ReqParse": 0.2, "ReqExplore": 0.6, "ReqClarify": 0.2, "DocGenerate": 0.1,
    "evaluation": 0.2, "function_call": 0.0, "answer": 0.7, "team": 0.3, "RewriteOutline": 0.3,
    "RewriteFill": 0.3, "RewriteReview": 0.2, "RewritePatch": 0.3, "RewriteQuestions": 0.3,
    "ReviewPanel": 0.2, "ReviewAuthor": 0.3,
}  # fmt: skip

# Each temperature variable set to a value of its own: which roles follow which variable.
TEMPERATURE_VARIABLES = {
    "OPENAI_TEMP_REQPARSE": 0.11, "OPENAI_TEMP_REQEXPLORE": 0.12, "OPENAI_TEMP_REQCLARIFY": 0.13,
    "OPENAI_TEMP_DOCGENERATE": 0.14, "OPENAI_TEMP_EVALUATION": 0.05, "OPENAI_TEMP_CHAT": 0.16,
    "OPENAI_TEMP_REWRITE": 0.17, "OPENAI_TEMP_REVIEW": 0.18, "TEAM_TEMPERATURE": 0.19,
}  # fmt: skip
SET_TEMPERATURES = {
    "chat": 0.16, "ReqParse": 0.11, "ReqExplore": 0.12, "ReqClarify": 0.13, "DocGenerate": 0.14,
    "evaluation": 0.05, "function_call": 0.0, "answer": 0.16, "team": 0.19,
    "RewriteOutline": 0.17, "RewriteFill": 0.17,
    "RewriteReview": 0.05,  # the lower of OPENAI_TEMP_REWRITE and OPENAI_TEMP_EVALUATION
    "RewritePatch": 0.17, "RewriteQuestions": 0.17, "ReviewPanel": 0.18, "ReviewAuthor": 0.17,
}  # fmt: skip

POLICIES = {
    "chat": (3, (1.0, 2.0)), "ReqParse": (3, (1.0, 2.0)), "ReqExplore": (3, (1.0, 2.0)),
    "ReqClarify": (3, (1.0, 2.0)), "DocGenerate": (5, (1.0, 2.0, 4.0, 8.0)),
    "evaluation": (6, (2.0, 4.0, 8.0, 16.0, 32.0)), "evaluation_answer": (3, ()),
    "DocGenerate_document": (2, ()), "function_call": (3, (1.0, 2.0)),
    "answer": (3, (1.0, 2.0)), "team": (3, (1.0, 2.0)), "RewriteOutline": (3, (1.0, 2.0)),
    "RewriteFill": (5, (1.0, 2.0, 4.0, 8.0)), "RewriteReview": (3, (1.0, 2.0)),
    "RewritePatch": (5, (1.0, 2.0, 4.0, 8.0)), "RewriteOutline_document": (2, ()),
    "RewriteFill_document": (2, ()), "RewritePatch_document": (2, ()),
    "RewriteQuestions_document": (2, ()), "RewriteQuestions": (3, (1.0, 2.0)),
    "ReviewPanel": (3, (1.0, 2.0)), "ReviewAuthor": (5, (1.0, 2.0, 4.0, 8.0)),
}  # fmt: skip

PROSE = {"repeat_penalty": 1.3, "frequency_penalty": 0.5, "presence_penalty": 0.3}
EMBEDDED_BODIES = {
    "chat": {"max_tokens": 512, **PROSE}, "answer": {"max_tokens": 512, **PROSE},
    "function_call": {"max_tokens": 384}, "evaluation": {"max_tokens": 768},
    "DocGenerate": {"max_tokens": 1024},
    **{r: {"max_tokens": 1536} for r in (
        "ReqParse", "ReqExplore", "ReqClarify", "team", "RewriteOutline", "RewriteFill",
        "RewriteReview", "RewritePatch", "RewriteQuestions", "ReviewPanel", "ReviewAuthor",
    )},
}  # fmt: skip


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path):
    for name in TEMPERATURE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_MAX_RETRIES", raising=False)
    monkeypatch.delenv("REQSTUDIO_RETRY_BACKOFF_SCALE", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_every_role_keeps_its_default_temperature(clean_env):
    settings = load_settings()
    assert {role: settings.temperature_for(role) for role in ROLES} == DEFAULT_TEMPERATURES


def test_every_role_follows_its_temperature_variable(clean_env, monkeypatch):
    for name, value in TEMPERATURE_VARIABLES.items():
        monkeypatch.setenv(name, str(value))
    settings = load_settings()
    assert {role: settings.temperature_for(role) for role in ROLES} == SET_TEMPERATURES


def test_every_role_keeps_its_retry_policy(clean_env):
    settings = load_settings()
    assert {name: policy_for(name, settings) for name in POLICIES} == {
        name: RetryPolicy(attempts, backoff) for name, (attempts, backoff) in POLICIES.items()
    }


def test_every_role_keeps_its_bounds_on_the_offline_model():
    assert {role: embedded_request_body(role) for role in ROLES} == EMBEDDED_BODIES
