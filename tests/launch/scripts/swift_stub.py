"""A stand-in for ms-swift's ``swift`` and ``megatron`` (swift/cli/main.py ``cli_main``),
which are not installed here: METHOD (``_`` read as ``-``) names a script (here
``$SWIFT_SCRIPTS/METHOD.py``, as swift finds swift/cli/METHOD.py); a first argument ending in
.yaml/.yml/.json is a config whose ``ENV`` sets variables not already set; with
NPROC_PER_NODE or NNODES set, pt/sft/rlhf/infer (megatron: every method) run ``python -m
torch.distributed.run`` with the torchrun options of the variables that are set."""

import json
import os
import subprocess
import sys

SCRIPTS = os.environ.get("SWIFT_SCRIPTS") or os.path.dirname(os.path.abspath(__file__))
ROUTES = ("pt", "sft", "infer", "rlhf", "deploy", "export")


def parse_config_env(argv: list) -> None:
    if not argv or not argv[0].endswith(".json"):
        return
    with open(argv[0], encoding="utf-8") as f:
        config = json.load(f)
    for key, value in (config.pop("ENV", None) or {}).items():
        os.environ.setdefault(key, str(value))
    argv[0:1] = [w for k, v in config.items() for w in (f"--{k}", str(v))]


def cli_main() -> None:
    is_megatron = os.path.basename(sys.argv[0]).startswith("megatron")
    argv = sys.argv[1:]
    method_name = argv[0].replace("_", "-")
    if method_name not in ROUTES:
        raise KeyError(method_name)
    argv = argv[1:]
    file_path = os.path.join(SCRIPTS, method_name + ".py")
    parse_config_env(argv)
    use_torchrun = os.getenv("NPROC_PER_NODE") is not None or os.getenv("NNODES") is not None
    if not use_torchrun or (not is_megatron and method_name not in {"pt", "sft", "rlhf", "infer"}):
        args = [sys.executable, file_path, *argv]
    else:
        torchrun_args = []
        for env_key in ["NPROC_PER_NODE", "MASTER_PORT", "NNODES", "NODE_RANK", "MASTER_ADDR"]:
            env_val = os.getenv(env_key)
            if env_val is not None:
                torchrun_args += [f"--{env_key.lower()}", env_val]
        args = [sys.executable, "-m", "torch.distributed.run", *torchrun_args, file_path, *argv]
    print(f"run sh: `{' '.join(args)}`", flush=True)
    result = subprocess.run(args, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)


if __name__ == "__main__":
    cli_main()
