"""Selectors by parallel coordinates (``tp=0``, ``pp=1 tp=0-3``, ``dp=0 and tp=0``,
``pp=last``): the grammar in rankdebug.ranks, against coordinate tables and hostile text."""

from __future__ import annotations

import time

import pytest

from rankdebug import ranks as rankspec
from rankdebug.command.plan import RankInfo
from rankdebug.ranks import RanksError, resolve, select, select_coords


def _grid(tp: int, dp: int, pp: int) -> dict[int, dict[str, int]]:
    """Megatron's default order: tp fastest, then dp, then pp."""
    return {r: {"tp": r % tp, "dp": r // tp % dp, "pp": r // (tp * dp)}
            for r in range(tp * dp * pp)}


GRID = _grid(2, 2, 2)  # 8 ranks


@pytest.mark.parametrize(("text", "spans"), [
    ("tp=0", [(0, 0), (2, 2), (4, 4), (6, 6)]),
    ("pp=1 tp=0-1", [(4, 7)]),
    ("dp=0 and tp=0", [(0, 0), (4, 4)]),
    ("dp=0 AND tp=0", [(0, 0), (4, 4)]),
    ("pp=last", [(4, 7)]),
    ("pp=first", [(0, 3)]),
    ("tp=0,1 pp=0", [(0, 3)]),
    ("tp = 1 , 0  pp = 0", [(0, 3)]),
    ("TP=1", [(1, 1), (3, 3), (5, 5), (7, 7)]),
    ("tp=* pp=1", [(4, 7)]),
    ("dp=all", [(0, 7)]),
    ("rank=1 or tp=0", [(0, 2), (4, 4), (6, 6)]),
    ("dp=0 tp=1 or pp=1 tp=0", [(1, 1), (4, 6)]),  # 1,5 | 4,6
    ("rank=4-7 dp=1", [(6, 7)]),
    ("tp=0\n pp=1", [(4, 4), (6, 6)]),
])
def test_selectors_pick_by_coordinates(text: str, spans: list[tuple[int, int]]) -> None:
    assert select_coords(text, 8, GRID) == spans


@pytest.mark.parametrize(("text", "column", "words"), [
    ("xp=0", 1, "unknown dimension 'xp': this job has tp, dp, pp"),
    ("pp=1 XP=0", 6, "unknown dimension 'xp'"),
    ("tp=2", 4, "tp=2 is past the job's tp (size 2: tp=0-1)"),
    ("tp=0-5", 4, "tp=0-5 is past"),
    ("rank=8", 6, "rank=8 is past"),
    ("tp=", 4, "tp= needs a value"),
    ("tp=,1", 4, "tp= needs a value"),
    ("=0", 1, "'=' needs a dimension"),
    ("tp=0=1", 5, "a term is one dimension"),
    ("tp==0", 4, "tp= needs a value"),
    ("tp=０", 4, "ASCII"),
    ("τp=0", 1, "ASCII"),
    ("tp=99999999999999999999999", 4, "past any index"),
    ("tp=" + "9" * 5000, 4, "past any index"),
    ("1,tp=0", 1, "write rank=1 inside a selector"),
    ("0-3 tp=0", 1, "cannot be mixed"),
    ("tp=0 1", 6, "cannot be mixed"),
    ("tp=0,pp=1", 5, "',' joins values of one dimension"),
    ("tp=0 and", 9, "'and' needs a term after it"),
    ("tp=0 or", 8, "'or' needs a term after it"),
    ("and tp=0", 1, "needs one before it"),
    ("tp=1-0", 4, "empty range 1-0"),
    ("tp=0-", 6, "needs an end"),
    ("tp=2:8", 5, "a range is A-B"),
    ("tp=zero", 4, "'zero' is not a value of tp"),
    ("tp 0", 4, "'tp' needs '='"),
    ("tp=0\x00", 5, "cannot read '\\x00'"),
    ("rank=0 tp=1", 1, "no rank of this job has 'rank=0 tp=1'"),
])
def test_bad_selectors_are_one_line_errors_at_their_column(
        text: str, column: int, words: str) -> None:
    with pytest.raises(RanksError) as caught:
        select_coords(text, 8, GRID)
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert (caught.value.line, caught.value.column) == (1, column)


def test_without_coordinates_a_selector_says_where_they_come_from() -> None:
    empty: dict[int, dict[str, int]] = {}
    for coords in (None, empty):
        with pytest.raises(RanksError) as caught:
            select_coords("tp=0", 8, coords)
        assert "not known" in caught.value.message
        assert "torchtitan" in caught.value.message and "device mesh" in caught.value.message
    # Where only plain specs are read (no table at hand), the same words, not "cannot read".
    with pytest.raises(RanksError, match="selects by parallel coordinates"):
        rankspec.items("pp=1 tp=0")
    with pytest.raises(RanksError, match="not known"):
        select("tp=0", [], 8)


def test_sizes_given_bound_values_a_partial_table_does_not_show() -> None:
    # A running job where only ranks 0 and 1 reported: tp's size is still 4.
    partial = {0: {"tp": 0}, 1: {"tp": 1}}
    assert select_coords("tp=1", 4, partial, {"tp": 4}) == [(1, 1)]
    with pytest.raises(RanksError, match="no rank of this job has 'tp=3'"):
        select_coords("tp=3", 4, partial, {"tp": 4})
    with pytest.raises(RanksError, match="tp=3 is past"):
        select_coords("tp=3", 4, partial)  # sizes from the table: tp has 2


def test_select_resolve_and_choice_take_selectors() -> None:
    infos = [RankInfo(r, 0, r) for r in range(8)]
    sel = select("tp=0", infos, None, GRID)
    assert (sel.spec, sel.ranks) == ("0,2,4,6", [0, 2, 4, 6])
    assert select("pp=1", infos, None, GRID).spec == "4-7"
    assert resolve("dp=1 tp=1", 8, GRID) == "3,7"
    assert resolve("0-3, 5", 8, None) == "0-3,5"  # plain specs pass through, checked
    assert rankspec.parse_choice("tp=0 arm") == rankspec.Choice("tp=0", True)
    assert rankspec.parse_choice(" dp=0 and tp=0 ") == rankspec.Choice("dp=0 and tp=0", False)
    with pytest.raises(RanksError, match="needs a value"):
        rankspec.parse_choice("tp= arm")
    with pytest.raises(RanksError):
        rankspec.parse_choice("tp=0 arm", allow_arm=False)


def test_a_big_job_and_huge_ranges_cost_what_they_say() -> None:
    # 65,536 ranks as tp 8 x dp 1024 x pp 8: one pass over the table, spans merged.
    big = _grid(8, 1024, 8)
    started = time.perf_counter()
    spans = select_coords("pp=last tp=0-3", len(big), big)
    took = time.perf_counter() - started
    assert len(spans) == 1024 and spans[0] == (7 * 8192, 7 * 8192 + 3)
    assert select_coords("pp=3", len(big), big) == [(3 * 8192, 4 * 8192 - 1)]
    assert took < 5.0  # ~0.1 s here; a margin for a loaded 2-core machine
    # A range far past a size is refused before anything is built from it.
    with pytest.raises(RanksError, match="past the job's tp"):
        select_coords("tp=0-1048575", len(big), big)
    with pytest.raises(RanksError, match="at most"):
        select_coords("tp=0 " * 20_000, len(big), big)


def test_random_text_is_a_selection_or_a_one_line_error_never_a_crash() -> None:
    import random

    rng = random.Random(34)
    alphabet = ["tp", "pp", "dp", "rank", "=", ",", "-", " ", "and", "or", "0", "1", "7",
                "last", "first", "*", "９", "\t", "\n", ":", "x", "99999999", "AND"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        try:
            spans = select_coords(text, 8, GRID)
        except RanksError as exc:
            assert "\n" not in exc.message and (exc.column is None or exc.column >= 1)
        else:
            assert spans and all(0 <= lo <= hi < 8 for lo, hi in spans)
