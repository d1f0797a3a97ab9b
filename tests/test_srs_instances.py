"""One SRS run, several places, with real app processes on one real
PostgreSQL, driven over their sockets as the browser drives them:

- an interrupted run resumed from a tab on each of two instances runs once: the provider is
  asked for DocGenerate once, and the second tab is told, in its language, that the run is
  going on elsewhere (the run's lease, reqstudio/run_lease.py);
- the instance running an SRS round is killed (SIGKILL): its lease lapses within seconds, and
  the other instance shows the thread and a Resume offer that continues from the last
  checkpoint, without running the finished steps again."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import psycopg

from reqstudio.persistence import libpq_conninfo
from tests import test_srs_support as srs
from tests.apps import AppProcess, shared_database_env, two_instances
from tests.browser_support import provider_env
from tests.socket_tabs import ScriptedLLMServer, Tab, cookie_of

LEASE_SECONDS = 3
DESCRIPTION = "A library lending system: readers search and reserve books."


def instances_env(llm_server: ScriptedLLMServer, database_url: str) -> dict[str, str]:
    return shared_database_env(provider_env(llm_server), database_url) | {
        "REQSTUDIO_RUN_LEASE_SECONDS": str(LEASE_SECONDS)
    }


def leases(database_url: str) -> list[tuple[str, str, float]]:
    """The run leases held now: (run, holder, seconds left), by the database's clock."""
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        return conn.execute(
            'SELECT "runKey", "holder", "expiresAt" - EXTRACT(EPOCH FROM clock_timestamp()) '
            'FROM run_leases WHERE "expiresAt" > EXTRACT(EPOCH FROM clock_timestamp())'
        ).fetchall()


def requests_for(llm_server: ScriptedLLMServer, marker: str) -> int:
    return len(srs.prompts_for(llm_server.requests, marker))


async def start_run_until_explore(app: AppProcess, llm_server: ScriptedLLMServer) -> Tab:
    """A new SRS thread on `app`, with a reference; returns once ReqParse is saved and round 1
    of ReqExplore is waiting on the provider (its answer is held back)."""
    llm_server.script(
        srs.parse_reply(("FR-01", "Readers search books."), ("FR-02", "Readers reserve books.")),
        srs.explore_reply(("FR-01", "never seen"), delay=120),
    )
    tab = await Tab(app).open()
    await tab.until_shown("mode is on")
    await tab.send(DESCRIPTION, attach=srs.E_STORE / "reference.md")
    await tab.until(lambda: "ReqExplore · round 1" in tab.step_names())
    await tab.until(lambda: requests_for(llm_server, srs.EXPLORE) == 1)
    assert tab.thread_id
    return tab


def script_the_rest(llm_server: ScriptedLLMServer, runs: int = 1) -> None:
    for _ in range(runs):
        llm_server.script(
            # held a moment: the run is still going when the other tab clicks
            srs.explore_reply(("FR-01", "Readers search books by title."), ("FR-02", "Reserve."),
                              delay=5),
            srs.clarify_reply(FR_01=2, FR_02=2),
            srs.doc_reply(srs.SRS_TEXT),
        )  # fmt: skip


async def resume_offer(tab: Tab) -> dict:
    await tab.until(lambda: tab.action("srs_resume") is not None)
    return tab.action("srs_resume")


def test_a_run_resumed_from_two_instances_runs_once(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    async def scenario(first: AppProcess, second: AppProcess) -> None:
        tab = await start_run_until_explore(first, llm_server)
        await tab.stop()
        await tab.until_shown("Stopped. Completed steps are saved")
        await tab.close()
        thread_id = tab.thread_id

        llm_server.reset()
        script_the_rest(llm_server, runs=2)  # enough for the run to go twice, were it let
        here = await Tab(first, thread_id=thread_id).open()
        there = await Tab(second, thread_id=thread_id, language="zh-CN").open()
        offer_here, offer_there = await resume_offer(here), await resume_offer(there)
        assert offer_here["payload"] == offer_there["payload"]  # the same run, on each
        try:
            running = here.click(offer_here)
            await here.until(lambda: requests_for(llm_server, srs.EXPLORE) == 1)  # it executes
            [(run, _, _)] = leases(postgres_url)
            assert run == f"srs:{offer_here['payload']['run']}"

            refused = await there.click(offer_there)  # the other instance, meanwhile
            assert refused.status_code == 200
            await there.until_shown("这次运行正在另一个标签页或另一个实例上执行")
            assert not there.step_names()  # nothing ran there

            await here.until_shown("✅ Done", timeout=120)
            assert (await running).status_code == 200
        finally:
            await here.close()
            await there.close()

        assert requests_for(llm_server, srs.DOC) == 1  # DocGenerate was asked for once
        assert (
            requests_for(llm_server, srs.EXPLORE) == 1
            and requests_for(llm_server, srs.CLARIFY) == 1
        )
        assert requests_for(llm_server, srs.PARSE) == 0  # resumed, not started again
        assert llm_server.pending == 3  # the second run's answers were never asked for
        assert leases(postgres_url) == []  # released when the run ended

    with two_instances(tmp_path, instances_env(llm_server, postgres_url)) as (first, second):
        asyncio.run(scenario(first, second))
    assert "refused, its lease is held by" in second.log()


def test_killed_instance_its_run_resumes_on_the_other_after_its_lease_lapses(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    async def scenario(first: AppProcess, second: AppProcess) -> None:
        tab = await start_run_until_explore(first, llm_server)
        [(run, _, _)] = leases(postgres_url)  # the run holds its lease on the first instance
        first.process.kill()  # SIGKILL in the middle of round 1: no goodbye, no clean-up
        first.process.wait(timeout=10)
        killed = time.monotonic()
        await tab.close()

        # the other instance has the thread in its history at once
        cookie = await cookie_of(second.url)
        async with httpx.AsyncClient(base_url=second.url, headers={"Cookie": cookie}) as http:
            listed = await http.post(
                "/project/threads", json={"pagination": {"first": 20}, "filter": {}}
            )
        assert listed.status_code == 200, listed.text
        assert tab.thread_id in [t["id"] for t in listed.json()["data"]]

        while leases(postgres_url):  # the dead holder no longer renews its lease
            assert time.monotonic() - killed < LEASE_SECONDS + 2, "the lease did not lapse"
            await asyncio.sleep(0.1)
        assert time.monotonic() - killed <= LEASE_SECONDS + 1

        llm_server.reset()
        script_the_rest(llm_server)
        there = await Tab(second, thread_id=tab.thread_id).open()
        try:
            offer = await resume_offer(there)
            assert there.shows("last completed node: ReqParse")  # the last checkpoint
            assert run == f"srs:{offer['payload']['run']}"
            finished = there.click(offer)
            await there.until_shown("✅ Done", timeout=120)
            assert (await finished).status_code == 200
            steps = there.step_names()  # titles end with the outcome (" · done")
            assert steps[0].startswith("ReqExplore · round 1")  # from where it stopped
            assert not any(name.startswith("ReqParse") for name in steps)
        finally:
            await there.close()
        assert requests_for(llm_server, srs.PARSE) == 0  # ReqParse was not run again
        assert requests_for(llm_server, srs.DOC) == 1
        assert leases(postgres_url) == []

    with two_instances(tmp_path, instances_env(llm_server, postgres_url)) as (first, second):
        asyncio.run(scenario(first, second))
