"""Each mode declares its model roles in its own package (`reqstudio/modes/<mode>/roles.py`),
and the core's view of them holds together: every role the code asks a model or a policy for is
declared, the answer models' registry and the declarations name the same roles and models, and
two declarations that disagree are refused by name."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from reqstudio import model_roles
from reqstudio.commands import COMMANDS
from reqstudio.model_roles import RetryPolicy, Role, RoleDeclarationError, Temperature
from reqstudio.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
# Where the code names a role outright: a model, a policy or a structured call for it.
ASKED_FOR = re.compile(
    r"(?<![\w])(?:for_role|policy_for|\.policy|_policy|_model|answer_model|chat_model)"
    r"\(\s*(?:[\w.]+,\s*)?\"(\w+)\"|role=\"(\w+)\""
)


def test_every_mode_with_a_model_declares_its_roles_in_its_own_package():
    declared = model_roles.declared()
    modules = {model_roles.roles_module(c.module) for c in COMMANDS} - {None}
    owners = {
        role.name: module.removesuffix(".roles")
        for module in modules
        for role in sys.modules[module].ROLES
    }
    assert set(owners) == set(declared.roles)
    assert {
        f"reqstudio.modes.{mode}" for mode in ("chat", "agent", "srs", "team", "rewrite", "review")
    } <= set(owners.values())
    assert owners["ReviewPanel"] == "reqstudio.modes.review" and owners["team"].endswith(".team")


def test_every_role_the_code_asks_for_is_declared():
    declared = model_roles.declared()
    asked = {
        (path.relative_to(ROOT).as_posix(), name)
        for path in (ROOT / "reqstudio").rglob("*.py")
        for match in ASKED_FOR.finditer(path.read_text(encoding="utf-8"))
        for name in match.groups()
        if name
    }
    assert len({name for _, name in asked}) >= 15  # the pattern still finds the call sites
    undeclared = sorted((p, n) for p, n in asked if n not in declared.policies)
    assert undeclared == []


def test_every_declared_role_has_a_temperature_policy_and_bounds():
    settings = load_settings(OPENAI_API_KEY="sk-x")
    for role in model_roles.declared().roles.values():
        assert 0.0 <= settings.temperature_for(role.name) <= 2.0
        assert role.policy.attempts >= 1
        assert 0 < role.offline_max_tokens < role.offline_context_tokens
        assert role.offline_context_tokens <= model_roles.OFFLINE_CONTEXT_TOKENS
        for temperature in role.temperatures:
            assert temperature.attribute in Settings.model_fields


def test_the_answer_models_and_the_declarations_name_the_same_roles():
    from tests.test_answer_models import ANSWERS  # imports every module: all are registered

    declared = model_roles.declared().roles
    registered: dict[str, set[str]] = {}
    for entry in ANSWERS:
        for role in entry.users:
            registered.setdefault(role, set()).add(entry.name)
        if entry.reask_policy is not None:
            assert entry.reask_policy in model_roles.declared().policies, entry.name
    assert set(registered) <= set(declared)
    assert {name: set(role.answers) for name, role in declared.items() if role.answers} == (
        registered
    )


def test_an_undeclared_role_is_named_with_the_declared_ones():
    with pytest.raises(model_roles.UnknownRole) as caught:
        load_settings(OPENAI_API_KEY="sk-x").temperature_for("Shouting")
    assert "'Shouting'" in str(caught.value) and "ReqParse" in str(caught.value)


def _mode(tmp_path: Path, monkeypatch, package: str, roles_source: str) -> str:
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "cli.py").write_text("")
    (folder / "roles.py").write_text(
        "from reqstudio.model_roles import RetryPolicy, Role, Temperature\n" + roles_source
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in (package, f"{package}.roles"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # the last case's modules
    return f"{package}.cli"


@pytest.mark.parametrize(
    ("second", "complaint"),
    [
        ('ROLES = [Role("mine", 0.5)]', "role 'mine' is declared by one_mode.roles and two_mode"),
        (
            'ROLES = [Role("theirs", Temperature("MINE_TEMP", "mine_temp", 0.9, "other"))]',
            "MINE_TEMP is declared twice, differently",
        ),
        (
            'ROLES = [Role("theirs", Temperature("THEIR_TEMP", "mine_temp", 0.2, "x"))]',
            "MINE_TEMP and THEIR_TEMP are both read into 'mine_temp'",
        ),
        ('ROLES = [Role("mine_again", 0.1)]', "two policies are named 'mine_again'"),
        ('ROLES = ["mine"]', "two_mode.roles.ROLES holds 'mine', not a Role"),
    ],
)
def test_declarations_that_disagree_are_refused(tmp_path, monkeypatch, second, complaint):
    one = _mode(
        tmp_path,
        monkeypatch,
        "one_mode",
        'ROLES = [Role("mine", Temperature("MINE_TEMP", "mine_temp", 0.5, "mine"), '
        'reasks={"again": RetryPolicy(2)})]\n',
    )
    two = _mode(tmp_path, monkeypatch, "two_mode", second + "\n")
    with pytest.raises(RoleDeclarationError, match=re.escape(complaint)):
        model_roles._collect.__wrapped__((one, two))


def test_a_role_shares_a_variable_or_takes_the_lowest_of_several():
    warm = Temperature("WARM", "warm", 0.9, "warm")
    cool = Temperature("COOL", "cool", 0.3, "cool")
    values = {warm: 0.9, cool: 0.3}.__getitem__
    assert model_roles.temperature_of(Role("a", warm), values) == 0.9
    assert model_roles.temperature_of(Role("b", (warm, cool)), values) == 0.3
    assert model_roles.temperature_of(Role("c", 0), values) == 0.0
    assert Role("d", 0.0).policy == RetryPolicy(3, (1.0, 2.0))  # three tries unless declared
