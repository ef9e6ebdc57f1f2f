"""``rankdebug eval --json``: the lines it prints, one JSON object each: a ``result`` or an
``error`` per rank (by rank), then one ``compare`` (with ``--per``: one per set of ranks).
Declared with the compare's groups; what a rank computed (a tensor's summary, where a
group differs, where the ranks were read) is the rank's or ``jobs.analysis.compare``'s
word, an object. The extension reads them (``core/evaluate.ts``, ``core/compare.ts``, held
by tsc to the types generated from here); the real-job tests check every line against them
(``fields.problem``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Message, Shape, message_of, optional

_RANK = Field("int", "the rank")




LINES: dict[str, Message] = {m.tag: m for m in (
    message_of("result", "A rank's value.",
             job=Field("str", "the job's id"), rank=_RANK,
             pid=Field("int", "the rank's process id", null=True),
             expr=Field("str", "the code, as given"),
             text=Field("str", "the value's repr (shortened)"),
             type=Field("str", "the value's type", null=True),
             summary=optional("object", "a tensor's or array's: {shape, dtype, min, max, mean, "
                           "nan, inf, checksum, ...}"),
             output=optional("str", "what the code printed"),
             number=optional("any", "the value as a number, where it is one (`nan`, `inf` as "
                          "text)"),
             seq=Field("int", "the rank's collective count where it was read; null where it "
                       "cannot tell", optional=True, null=True)),
    message_of("error", "A rank that could not answer, or whose code failed.",
             rank=_RANK, message=Field("str", "what went wrong"),
             line=optional("int", "the line of the code that failed"),
             candidates=optional("[object]", "the frames an ambiguous --frame name fits: "
                              "{index, function, file, line}")),
    message_of("compare", "The ranks grouped by value, the largest group first.",
             groups=Field("[Group]"),
             at=Field("object", "where the ranks were read (`{\"paused\": true}`, or after "
                      "one optimizer step: `{\"seq\": N, ...}`); null: as each answered",
                      null=True),
             warning=optional("str", "why the values may not be comparable"),
             per=optional("object", "--per: the coordinates the ranks of this compare share")),
)}

SHAPES: dict[str, Shape] = {s.name: s for s in (
    Shape("Group", "Ranks with the same value.", {
        "ranks": Field("[int]"), "text": Field("str", "the value's text"),
        "checksum": Field("str", "a tensor group's checksum", optional=True, null=True),
        "differs": Field("object", "a tensor group that differs from the largest: where "
                         "({from, first, last, at})", optional=True)}),
)}
