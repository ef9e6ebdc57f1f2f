"""``supervise.rank_reports``: every report ``ctl_wire`` declares reaches the handler
named after it, and each handler records and says what the report means; no process,
no socket (a fake hub: ``supervise_fakes``)."""

from __future__ import annotations

import pytest
from supervise_fakes import FakeHub

from rankdebug.protocol import ctl as ctl_wire
from rankdebug.supervise.endpoints import Endpoints
from rankdebug.supervise.gates.gate import Gate
from rankdebug.supervise.nodes.watch import Nodes
from rankdebug.supervise.rank_conns import RankConn, RankConns
from rankdebug.supervise.rank_reports import RankReports
from rankdebug.supervise.together import Together


def reports(hub: FakeHub) -> RankReports:
    gates: dict[int, Gate] = {}
    conns = RankConns()
    nodes = Nodes(hub, [], spread=False)
    together = Together(gates, hub, hub.plan.stop)
    endpoints = Endpoints(hub, gates, together, conns, nodes)
    return RankReports(hub, conns, endpoints, nodes)


def test_every_declared_report_has_the_handler_named_after_it() -> None:
    built = reports(FakeHub())
    assert set(built.handlers) == set(ctl_wire.EVENTS)
    for name, handler in built.handlers.items():
        assert handler.__name__ == f"on_{name}"


def test_a_declared_report_without_a_handler_stops_the_build(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ctl_wire.EVENTS, "newly_declared", ctl_wire.EVENTS["exit"])
    with pytest.raises(AttributeError, match="on_newly_declared"):
        reports(FakeHub())


def test_started_records_the_rank_running_with_its_places() -> None:
    hub = FakeHub(chosen=[1])
    built = reports(hub)
    built.report(7, {"event": "started", "rank": 1, "pid": 4242, "local_rank": 1,
                     "world_size": 4})
    assert hub.recorded == [(1, {"pid": 4242, "state": "running", "local_rank": 1,
                                 "world_size": 4})]
    conn = built.conns.by_cid[7]
    assert (conn.rank, conn.pid, conn.local_rank, conn.chosen) == (1, 4242, 1, True)
    assert hub.emitted == []


def test_an_armed_rank_says_it_was_not_chosen() -> None:
    built = reports(FakeHub())
    built.report(3, {"event": "started", "rank": 2, "pid": 10, "chosen": False})
    assert built.conns.by_cid[3].chosen is False


def test_listening_is_said_then_recorded() -> None:
    hub = FakeHub()
    reports(hub).report(1, {"event": "listening", "rank": 0, "pid": 9, "host": "127.0.0.1",
                            "port": 5678})
    assert hub.emitted == [{"event": "listening", "rank": 0, "host": "127.0.0.1",
                            "port": 5678, "pid": 9, "job": "job-1"}]
    assert hub.recorded == [(0, {"pid": 9, "state": "listening", "host": "127.0.0.1",
                                 "port": 5678})]


def test_attached_without_a_gate_is_said_by_the_supervisor() -> None:
    hub = FakeHub()
    built = reports(hub)
    built.report(1, {"event": "attached", "rank": 0, "pid": 9})
    assert built.conns.attached == {0}
    assert hub.emitted == [{"event": "attached", "rank": 0, "pid": 9, "job": "job-1"}]
    assert hub.recorded == [(0, {"pid": 9, "state": "attached"})]


def test_exit_marks_the_script_finished() -> None:
    hub = FakeHub()
    built = reports(hub)
    built.report(1, {"event": "exit", "rank": 3, "pid": 9})
    assert built.conns.by_cid[1].finished
    assert hub.recorded == [(3, {"pid": 9, "state": "exited"})]


def test_a_handler_socket_is_recorded_armed_unless_the_rank_says_not() -> None:
    hub = FakeHub()
    built = reports(hub)
    built.report(1, {"event": "handler", "rank": 0, "pid": 9, "socket": "/s/rank-0.sock"})
    built.report(2, {"event": "handler", "rank": 1, "pid": 8, "socket": "/s/rank-1.sock",
                     "armed": False})
    assert hub.recorded == [(0, {"pid": 9, "socket": "/s/rank-0.sock", "armed": True}),
                            (1, {"pid": 8, "socket": "/s/rank-1.sock", "armed": False})]
    assert built.conns.by_cid[1].socket == "/s/rank-0.sock"


def test_a_role_is_said_once() -> None:
    hub = FakeHub()
    built = reports(hub)
    for _ in range(2):
        built.report(1, {"event": "exit", "rank": 0, "role": "actor/rollout"})
    assert [e for e in hub.emitted if e["event"] == "role"] == [
        {"event": "role", "rank": 0, "role": "actor/rollout", "job": "job-1"}]
    assert hub.recorded.count((0, {"role": "actor/rollout"})) == 1


def test_raised_holds_the_rank_until_its_connection_closes() -> None:
    hub = FakeHub()
    built = reports(hub)
    built.report(4, {"event": "raised", "rank": 2, "pid": 77, "exception": "ValueError",
                     "message": "bad", "file": "/t.py", "line": 3, "function": "f"})
    assert built.conns.held_raised == {2}
    assert hub.emitted == [{"event": "raised", "rank": 2, "pid": 77,
                            "exception": "ValueError", "message": "bad", "file": "/t.py",
                            "line": 3, "function": "f", "job": "job-1"}]
    assert hub.recorded == []  # a rank here writes its own entry
    ended = built.on_eof(4)
    assert ended is not None and ended.rank == 2
    assert built.conns.held_raised == set()
    assert built.conns.by_cid == {}


def test_an_adapter_asked_from_another_node_is_refused() -> None:
    hub = FakeHub()
    built = reports(hub)
    built.conns.by_cid[5] = RankConn(node="node1")  # its started report named the node
    built.report(5, {"event": "adapter", "rank": 3})
    assert hub.ctl.replies == [(5, {"error": "on another node: listen there"})]
