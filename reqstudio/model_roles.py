"""Model roles, declared by the modes that own them.

A mode's package holds a `roles` module with a list `ROLES` of `Role`: for each role its
temperature (a variable of its own, one shared with another role, the lowest of several, or a
fixed value), its retry policy and the re-ask policies named after it, its bounds on the
offline model, and the answer models it answers in (`reqstudio.answers`). The core reads them
through the command registry (`reqstudio.commands.COMMANDS`: the `roles` module beside each
command's module, where there is one) and builds from them the temperature variables of the
settings (`reqstudio.settings`), the call policies (`reqstudio.calls`) and the offline model's
bounds (`reqstudio.llm`); the configuration docs' rows are checked against them. So a mode that
adds a role edits its own package only.

Standard library only: the settings import it, and a mode's `roles` module imports nothing
else (no LangChain, no model client).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

# The offline model's window (`EmbeddedModelServer`'s n_ctx) and the longest answer a role
# may have on it unless it declares another: the 135M model loops when left free.
OFFLINE_CONTEXT_TOKENS = 8192
OFFLINE_MAX_TOKENS = 1536


@dataclass(frozen=True)
class RetryPolicy:
    """How often one call is tried and how long to wait between tries.

    `attempts` counts every try, the first included; `backoff[i]` is the wait before try i+2
    (the last value repeats if there are more tries than waits)."""

    attempts: int
    backoff: tuple[float, ...] = ()

    def wait_before(self, attempt: int) -> float:
        """Seconds to wait before try number `attempt` (2, 3, ...)."""
        if attempt < 2 or not self.backoff:
            return 0.0
        return self.backoff[min(attempt - 2, len(self.backoff) - 1)]

    def worst_case_seconds(self, timeout: float) -> float:
        """A provider that never answers: every try times out, every wait is taken."""
        waits = sum(self.wait_before(a) for a in range(2, self.attempts + 1))
        return self.attempts * timeout + waits

    def scaled(self, factor: float) -> RetryPolicy:
        """The same tries with shorter waits (tests and benchmarks)."""
        return RetryPolicy(self.attempts, tuple(w * factor for w in self.backoff))


def exponential(attempts: int, first: float = 1.0) -> RetryPolicy:
    """Seed 000's backoff: wait 2^k × `first` seconds before try k+2."""
    return RetryPolicy(attempts, tuple(first * 2**k for k in range(max(attempts - 1, 0))))


# Roles that name no policy are tried three times, like SRS's list agents.
DEFAULT_POLICY = exponential(3)


@dataclass(frozen=True)
class Temperature:
    """A temperature variable: read from `variable` (0–2, `default` when unset) into the
    settings' attribute `attribute`; `meaning` is its line in the configuration docs."""

    variable: str
    attribute: str
    default: float
    meaning: str

    def docs_row(self) -> str:
        """The variable's row in the configuration table (docs/configuration.md)."""
        return f"| `{self.variable}` | {self.default:g} | 0–2 | {self.meaning} |"


@dataclass(frozen=True)
class Role:
    """One model role.

    `temperature`: a `Temperature` (its own variable, or one it shares with other roles), a
    tuple of them (the lowest of their values) or a fixed number. `policy`: the retry policy of
    its calls. `reasks`: policies named `<name>_<key>` for re-asking an answer that arrived
    whole but unusable (a document that is no document, JSON out of range). `offline_*`: its
    bounds on the offline model (the longest answer, the context it may fill) and whether its
    answers are prose (sampled with penalties against repetition). `answers`: the class names
    of the answer models it answers in (`reqstudio.answers.answer_model`)."""

    name: str
    temperature: Temperature | tuple[Temperature, ...] | float
    policy: RetryPolicy = DEFAULT_POLICY
    reasks: Mapping[str, RetryPolicy] = field(default_factory=dict)
    offline_max_tokens: int = OFFLINE_MAX_TOKENS
    offline_context_tokens: int = OFFLINE_CONTEXT_TOKENS
    offline_prose: bool = False
    answers: tuple[str, ...] = ()

    @property
    def temperatures(self) -> tuple[Temperature, ...]:
        """The variables its temperature is read from."""
        if isinstance(self.temperature, Temperature):
            return (self.temperature,)
        if isinstance(self.temperature, tuple):
            return self.temperature
        return ()


class RoleDeclarationError(ValueError):
    """Two declarations disagree, or a `roles` module declares something that is no role."""


class UnknownRole(KeyError):
    """A model was asked for a role no registered mode declares."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class DeclaredRoles:
    """Every registered mode's roles, with the temperature variables and the named policies
    they bring."""

    roles: Mapping[str, Role]
    temperatures: Mapping[str, Temperature]  # by variable
    policies: Mapping[str, RetryPolicy]  # by role, and `<role>_<key>` for each re-ask


def roles_module(command_module: str) -> str | None:
    """The `roles` module beside a command's module, if the command's package has one."""
    package = command_module.rpartition(".")[0]
    if not package or package == __package__:  # a command of the app's own (users, serve)
        return None
    name = f"{package}.roles"
    try:
        return name if importlib.util.find_spec(name) is not None else None
    except ModuleNotFoundError:
        return None


def declared() -> DeclaredRoles:
    """The roles of every command in the registry (including those registered at run time)."""
    from reqstudio.commands import COMMANDS

    return _collect(tuple(dict.fromkeys(c.module for c in COMMANDS)))


@lru_cache(maxsize=8)
def _collect(command_modules: tuple[str, ...]) -> DeclaredRoles:
    roles: dict[str, Role] = {}
    temperatures: dict[str, Temperature] = {}
    policies: dict[str, RetryPolicy] = {}
    where: dict[str, str] = {}
    modules = dict.fromkeys(m for m in map(roles_module, command_modules) if m is not None)
    for module_name in modules:
        for role in getattr(importlib.import_module(module_name), "ROLES", ()):
            if not isinstance(role, Role):
                raise RoleDeclarationError(f"{module_name}.ROLES holds {role!r}, not a Role")
            if role.name in roles:
                raise RoleDeclarationError(
                    f"role {role.name!r} is declared by {where[role.name]} and {module_name}"
                )
            roles[role.name], where[role.name] = role, module_name
            for temperature in role.temperatures:
                _add_temperature(temperatures, temperature)
            for name, policy in ((role.name, role.policy), *_reask_names(role)):
                if name in policies:
                    raise RoleDeclarationError(f"two policies are named {name!r}")
                policies[name] = policy
    return DeclaredRoles(roles, temperatures, policies)


def _reask_names(role: Role) -> list[tuple[str, RetryPolicy]]:
    return [(f"{role.name}_{key}", policy) for key, policy in role.reasks.items()]


def _add_temperature(known: dict[str, Temperature], new: Temperature) -> None:
    old = known.get(new.variable)
    if old is not None and old != new:
        raise RoleDeclarationError(f"{new.variable} is declared twice, differently")
    clash = next((t for t in known.values() if t.attribute == new.attribute), None)
    if clash is not None and clash.variable != new.variable:
        raise RoleDeclarationError(
            f"{clash.variable} and {new.variable} are both read into {new.attribute!r}"
        )
    known[new.variable] = new


def role(name: str) -> Role:
    """The declaration of role `name`; `UnknownRole` names the declared ones if there is none."""
    roles = declared().roles
    found = roles.get(name)
    if found is None:
        raise UnknownRole(
            f"no registered mode declares the model role {name!r} (declared: "
            f"{', '.join(roles)}); a mode declares its roles in ROLES of its package's "
            "roles module"
        )
    return found


def temperature_of(found: Role, value_of) -> float:
    """`found`'s temperature, `value_of(Temperature)` reading each of its variables."""
    if isinstance(found.temperature, int | float):
        return float(found.temperature)
    return min(value_of(t) for t in found.temperatures)
