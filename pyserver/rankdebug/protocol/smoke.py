"""``rankdebug smoke --json``: the one object it prints (``smoke.model.Smoke.to_json``), and
with ``--check`` its stage lines instead (``smoke.checks.Stage``), declared with each nested
object. The extension reads them (``core/smokeScript.ts parseSmoke``, held by tsc to the
types generated from here); the smoke tests check every answer against them
(``fields.shape_problem``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Shape, shape_of

SHAPES: dict[str, Shape] = {s.name: s for s in (
    shape_of("Answer", "What `rankdebug smoke --json` prints: the smoke version of the command.",
       argv=Field("[str]", "the smoke command's words"),
       env=Field("object", "the environment it sets, name to value"),
       changes=Field("[Change]", "each knob changed, with why"),
       files=Field("[str]", "the files written for it (a smoke config)"),
       command=Field("str", "one shell line: the assignments, then the words"),
       notes=Field("[str]", "what the user should know"),
       missing=Field("[str]", "what it could not make smaller"),
       frameworks=Field("[str]", "the frameworks found"),
       plan=Field("object", "the launch plan it was made from"),
       original=Field("object", "the command as written, {argv, env}"),
       copies=Field("[Copy]", "files copied to be changed"),
       not_applied=Field("[NotApplied]", "knobs no channel reaches: never changed"),
       hook=Field("object", "the run-time hook: {path, steps, training_args}; null when the "
                  "run has none", null=True),
       gpu_uses=Field("[GpuUse]", "where the script asks for CUDA or NCCL"),
       cpu_change=Field("[str]", "what --cpu sets (`--backend=gloo`)")),
    shape_of("Change", "One knob changed.",
       name=Field("str", "as the framework spells it"),
       **{"from": Field("str", "its value before; null: not set", null=True),
          "to": Field("str", "its value now; null: not set", null=True)},
       why=Field("str"), where=Field("str", "where it lives: a flag, a config key, a script "
                                     "variable, an environment variable")),
    shape_of("Copy", "A file copied to be changed.",
       **{"from": Field("str"), "to": Field("str")}),
    shape_of("NotApplied", "A knob the script cannot be given from outside.",
       name=Field("str"), why=Field("str")),
    shape_of("GpuUse", "Where a script asks for CUDA or NCCL whatever the machine has.",
       what=Field("str", "as written, shortened (`x.cuda()`)"), line=Field("int"),
       kind=Field("str", "`nccl` or `cuda`"),
       knob=Field("str", "the key or option a command-line value replaces; null: fixed in "
                  "code", null=True),
       value=Field("str", "the value as the job gets it")),
    shape_of("Stage", "One line of `rankdebug smoke --check --json`: a stage passed or failed "
       "(the first that fails is the last line).",
       stage=Field("str", "the stage's name (`entry` first)"),
       ok=Field("bool"), reason=Field("str")),
)}
