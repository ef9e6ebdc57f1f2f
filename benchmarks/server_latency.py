"""Language server latency: ``didChange`` on a 2,000-line script → code lenses returned.

Starts ``python -m rankdebug server`` over stdio, opens a 2,000-line launch script,
then 200 times: sends one incremental edit (a number in a launch command, a character
in an ``echo`` line, or a line added or removed) and times until the code lens response
for that version arrives, checking that the lenses reflect the edit. Prints p50/p95 and,
for the same texts in this process, the engine alone (``plan_all``) and the server's
whole analysis (``rankdebug.lsp.analysis.analyze``), to show where the time goes.

    python benchmarks/server_latency.py [--lines 2000] [--edits 200]

Target: p95 under 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.workspace import PositionCodec

HEADER = """\
#!/bin/bash
set -euo pipefail
PROJECT=bench
STAGE=${STAGE:-sft}
GPUS_PER_NODE=4
MICRO_BATCH=2
GRAD_ACC=8
OUT_ROOT=${OUT_ROOT:-./outputs}
export NCCL_DEBUG=WARN
log() { echo "[$(date +%T)] $*"; }
"""

BLOCK = """\
# ---------------------------------------------------------------------------
# Experiment {i}: {model} on {nodes} node(s)
# ---------------------------------------------------------------------------
MODEL_{i}=${{MODEL_{i}:-{model}}}
export WANDB_RUN_NAME="${{PROJECT}}-{i}"
GBS_{i}=$((MICRO_BATCH * GRAD_ACC * {nodes} * GPUS_PER_NODE))
TRAIN_ARGS_{i}=(
    --model_name_or_path "$MODEL_{i}"
    --learning_rate 1e-4
    --global_batch_size $GBS_{i}
    --output_dir "$OUT_ROOT/{i}"
)
if [ "$STAGE" = "sft" ]; then
    DATA_{i}=alpaca_en_demo
else
    DATA_{i}=c4_demo
fi
mkdir -p "$OUT_ROOT/{i}"
echo "[{i}] model=$MODEL_{i} gbs=$GBS_{i}"
"""

LAUNCH = """\
CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nnodes 1 --nproc_per_node {nproc} \\
    --master_port {port} train.py "${{TRAIN_ARGS_{i}[@]}}" \\
    --dataset "$DATA_{i}"
"""


def make_script(lines: int) -> str:
    text = HEADER
    i = 0
    while text.count("\n") < lines - 3:
        text += BLOCK.format(i=i, model=["llama3-8b", "qwen2-7b"][i % 2], nodes=1)
        if i % 2 == 1:
            text += LAUNCH.format(i=i, nproc=1 + i % 4, port=29500 + i)
        i += 1
    return text


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Editor:
    """The document as the client sees it, and the edits the benchmark makes."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.version = 1
        self.launch_rows = [i for i, line in enumerate(self.lines)
                            if line.startswith("CUDA_VISIBLE_DEVICES=") and "torchrun" in line]
        self.echo_rows = [i for i, line in enumerate(self.lines) if line.startswith("echo ")]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def edit(self, n: int) -> tuple[types.TextDocumentContentChangePartial, int | None]:
        """The n-th edit, applied here; returns it and the launch row it changed, if any."""
        kind = n % 4
        if kind in (0, 1):  # retype nproc in a launch command: its lens must change
            row = self.launch_rows[(n // 4) % len(self.launch_rows)]
            line = self.lines[row]
            col = line.index("--nproc_per_node ") + len("--nproc_per_node ")
            new = str(1 + (int(line[col]) % 4))
            self.lines[row] = line[:col] + new + line[col + 1:]
            change = _change(row, col, row, col + 1, new)
            return change, row
        if kind == 2:  # type in an echo line
            row = self.echo_rows[(n // 4) % len(self.echo_rows)]
            col = len(self.lines[row]) - 1
            self.lines[row] = self.lines[row][:col] + "!" + self.lines[row][col:]
            return _change(row, col, row, col, "!"), None
        # add a comment line at the top (shifts everything), or remove it again
        if self.lines[1] == "# edited":
            del self.lines[1]
            self._shift(-1)
            return _change(1, 0, 2, 0, ""), None
        self.lines.insert(1, "# edited")
        self._shift(1)
        return _change(1, 0, 1, 0, "# edited\n"), None

    def _shift(self, by: int) -> None:
        self.launch_rows = [r + by for r in self.launch_rows]
        self.echo_rows = [r + by for r in self.echo_rows]

    def expected_title(self, row: int) -> str:
        line = self.lines[row]
        col = line.index("--nproc_per_node ") + len("--nproc_per_node ")
        n = int(line[col])
        return f"▶ Debug · {n} rank" + ("" if n == 1 else "s")


def _change(sl: int, sc: int, el: int, ec: int,
            text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=sl, character=sc),
                          end=types.Position(line=el, character=ec)),
        text=text)


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) a process has used so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def serve_latency(text: str, edits: int,
                        folder: Path) -> tuple[list[float], list[str], float | None]:
    client = LanguageClient("server-latency", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
        return None

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(params: types.LogMessageParams) -> None:
        return None

    await client.start_io(sys.executable, "-m", "rankdebug", "server")
    uri = (folder / "train.sh").as_uri()
    (folder / "train.sh").write_text(text)
    (folder / "train.py").write_text("print('train')\n")
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=folder.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="bench")],
        initialization_options={"settings": [{"workspace": folder.as_uri()}]},
    ))
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1,
                                             text=text)))
    ident = types.TextDocumentIdentifier(uri=uri)
    first = await client.text_document_code_lens_async(types.CodeLensParams(text_document=ident))
    editor = Editor(text)
    assert first and len(first) == 2 * len(editor.launch_rows), len(first or [])
    times: list[float] = []
    texts: list[str] = []
    pid = client._server.pid if client._server is not None else None
    cpu_before = cpu_seconds(pid) if pid else None
    for n in range(edits):
        change, row = editor.edit(n)
        editor.version += 1
        started = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri,
                                                                version=editor.version),
            content_changes=[change]))
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=ident))
        times.append(time.perf_counter() - started)
        texts.append(editor.text)
        assert lenses is not None
        if row is not None:
            title = next(lens.command.title for lens in lenses
                         if lens.range.start.line == row and lens.command)
            assert title == editor.expected_title(row), (n, title)
    cpu_after = cpu_seconds(pid) if pid else None
    cpu = (cpu_after - cpu_before) / edits if cpu_before is not None and cpu_after else None
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times, texts, cpu


def in_process(texts: list[str], fn: Callable[[str], object]) -> list[float]:
    out = []
    for text in texts:
        started = time.perf_counter()
        fn(text)
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--edits", type=int, default=200)
    args = ap.parse_args()
    text = make_script(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        times, texts, cpu = asyncio.run(serve_latency(text, args.edits, folder))

        from rankdebug.command import plan_all
        from rankdebug.lsp.analysis import PlannerSlot, Snapshot, analyze
        from rankdebug.lsp.settings import Settings

        path = str(folder / "train.sh")
        settings = Settings(workspace=str(folder))
        engine = in_process(texts, lambda t: plan_all(t, path=path, language="shell",
                                                      cwd=folder))
        rows = [("  engine, whole document: plan_all", engine)]
        try:
            from rankdebug.command.incremental import DocumentPlans
        except ImportError:
            pass
        else:
            planner = DocumentPlans(path=path, language="shell", cwd=folder)
            planner.update(text)
            rows.append(("  engine, incremental: DocumentPlans.update",
                         in_process(texts, planner.update)))
        slot = PlannerSlot()
        analyze(Snapshot("file://" + path, 0, 0, text, path, "shell", settings,
                         PositionCodec(), slot))
        rows.append(("  server analysis: analyze", in_process(texts, lambda t: analyze(
            Snapshot("file://" + path, 1, 1, t, path, "shell", settings, PositionCodec(),
                     slot)))))
    print(f"script: {text.count(chr(10))} lines, {len(text.encode()) // 1024} KiB, "
          f"{text.count('torchrun')} launch commands; {len(times)} edits")
    def row(name: str, values: list[float]) -> None:
        print(f"{name:46s} p50 {pct(values, 0.5) * 1000:7.1f} ms   "
              f"p95 {pct(values, 0.95) * 1000:7.1f} ms   max {max(values) * 1000:7.1f} ms")

    row("didChange → code lenses (server over stdio)", times)
    kinds = {0: "nproc retyped in a command", 1: "nproc retyped in a command",
             2: "a character typed in an echo line", 3: "a comment line added/removed"}
    for name in dict.fromkeys(kinds.values()):
        row(f"  {name}", [t for n, t in enumerate(times) if kinds[n % 4] == name])
    print("the same texts in this process, one after another:")
    for name, values in rows:
        row(name, values)
    if cpu is not None:
        print(f"server CPU time per edit (user + system, load-independent): {cpu * 1000:.1f} ms")
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.1f} on {os.cpu_count()} CPUs")
    p95 = pct(times, 0.95) * 1000
    print(f"target p95 < 50 ms: {'met' if p95 < 50 else 'NOT met'} ({p95:.1f} ms)")


if __name__ == "__main__":
    main()
