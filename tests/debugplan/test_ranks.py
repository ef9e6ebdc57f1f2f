"""The rank-spec grammar (rankdebug.ranks) and the bootstrap's stdlib copy of it."""

from __future__ import annotations

import pytest

from rankdebug import ranks as rankspec
from rankdebug.command.plan import RankInfo
from rankdebug.ranks import RanksError, select
from rankdebug.runtime import bootstrap


def _ranks(world: int, per_node: int) -> list[RankInfo]:
    return [RankInfo(r, r // per_node, r % per_node) for r in range(world)]


def test_select_lists_ranges_all_local0() -> None:
    ranks = _ranks(8, 4)
    assert select("1,3", ranks).ranks == [1, 3]
    assert select("0-2,7", ranks).ranks == [0, 1, 2, 7]
    assert select("all", ranks).ranks == list(range(8))
    assert select("local0", ranks).ranks == [0, 4]
    assert select("local1,0", ranks).spec == "0,1,5"


def test_a_node_group_is_every_rank_of_that_node() -> None:
    ranks = _ranks(16, 4)
    assert select("node1", ranks).ranks == [4, 5, 6, 7]
    assert select("node0,node3,9", ranks).spec == "0,1,2,3,9,12,13,14,15"
    assert rankspec.parse_choice("node 2 arm") == rankspec.Choice("node2", True)
    assert select(rankspec.parse_choice("Node 1, 0").spec, ranks).ranks == [0, 4, 5, 6, 7]
    with pytest.raises(RanksError, match="no node 4"):
        select("node4", ranks)
    # Only the plan knows the nodes: where it does not, the spec is refused, not guessed.
    with pytest.raises(RanksError, match="not known"):
        select("node1", [], world_size=8)
    with pytest.raises(RanksError, match="not known"):
        select("node0", [RankInfo(0, None, 0), RankInfo(1, None, 1)])


@pytest.mark.parametrize("bad", ["", "x", "3-1", "8", "0-9", "local7", "*", "1;2", "-1",
                                 "node", "node-1", "node1-2"])
def test_select_refuses(bad: str) -> None:
    with pytest.raises(RanksError):
        select(bad, _ranks(8, 4))


def test_select_unknown_world_keeps_spec() -> None:
    assert select("local0", []).ranks is None
    assert select("local0", []).spec == "local0"
    assert select("1,3", []).ranks == [1, 3]
    assert select("all", [], world_size=3).ranks == [0, 1, 2]
    with pytest.raises(RanksError):
        select("5", [], world_size=4)


def test_errors_are_bad_input_with_exit_2() -> None:
    with pytest.raises(RanksError) as info:
        select("nope", [])
    assert info.value.exit_code == 2
    assert info.value.to_json()["error"]["message"].startswith("--ranks: cannot read 'nope'")


@pytest.mark.parametrize(("text", "spec", "arm"), [
    ("1,3", "1,3", False),
    (" 1 , 3 ", "1,3", False),
    ("0 - 3, 8", "0-3,8", False),
    ("1,3 arm", "1,3", True),
    ("1,3+arm", "1,3", True),
    ("arm 1", "1", True),
    ("--arm", "", True),
    ("ALL", "all", False),
])
def test_parse_choice(text: str, spec: str, arm: bool) -> None:
    assert rankspec.parse_choice(text) == rankspec.Choice(spec, arm)


@pytest.mark.parametrize("text", ["", "arm x", "1,,x", "*"])
def test_parse_choice_refuses(text: str) -> None:
    with pytest.raises(RanksError):
        rankspec.parse_choice(text)


def test_parse_choice_without_arm() -> None:
    with pytest.raises(RanksError):
        rankspec.parse_choice("1 arm", allow_arm=False)


@pytest.mark.parametrize(("raw", "spec"), [(None, "0"), (2, "2"), ([3, 1, 3], "1,3"),
                                           (" local0 ", "local0")])
def test_normalise(raw: object, spec: str) -> None:
    assert rankspec.normalise(raw) == spec


@pytest.mark.parametrize("raw", [True, [], ["1"], [-1], "  ", {"a": 1}])
def test_normalise_refuses(raw: object) -> None:
    with pytest.raises(RanksError):
        rankspec.normalise(raw)


SPECS = ["all", "0", "3", "1,3", "0-2", "2-5,7", "local0", "local1", "local0,5", "LOCAL1"]


@pytest.mark.parametrize("spec", SPECS)
def test_bootstrap_copy_agrees(spec: str) -> None:
    """The rank's stdlib copy decides exactly as the grammar does."""
    for rank in range(8):
        local = rank % 4
        assert bootstrap.rank_chosen(spec, rank, local) == rankspec.chosen(spec, rank, local)
    want = select(spec, _ranks(8, 4)).ranks
    assert want == [r for r in range(8) if rankspec.chosen(spec, r, r % 4)]
