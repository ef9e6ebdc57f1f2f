"""``accelerate launch``, ``accelerate-launch`` and ``python -m accelerate.commands.launch``.

Options are accelerate/commands/launch.py's ``launch_command_parser()`` (accelerate
1.15, plus options of earlier releases): argparse without abbreviations
(``allow_abbrev=False``), and every option may be written with ``-`` or ``_``.

``--num_processes`` is the total number of processes; each of ``--num_machines``
machines runs num_processes / num_machines. Values not on the command line come
from ``--config_file`` (YAML) or, without one and without ``--cpu``, from accelerate's
default config file when the environment says where it is (HF_HOME, XDG_CACHE_HOME or
HOME); the plan names the file read. As launch.py's launch_command: with no mode flag
(``--multi_gpu``, ``--use_deepspeed`` ...), a config whose distributed_type is not a
multi-process kind (``NO``) runs the script once, whatever num_processes says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    Setting,
    basename,
    flag_kind,
    launcher_entry,
    load_yaml_mapping,
    not_known,
    python_module_start,
    read_int,
    visible_devices,
)
from rankdebug.command.options import Opt, Parsed, Spec, flag, parse_options, value
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["accelerate"]
NAME = ROW.name
# `accelerate launch` and `accelerate-launch`; `python -m` of the launch command, or of the
# CLI followed by `launch`.
_CLI_PROGRAM, _LAUNCH_PROGRAM = ROW.programs
_LAUNCH_MODULE, _CLI_MODULE = ROW.modules

_FLAGS = (
    "cpu", "multi_gpu", "tpu", "ipex", "enable_cpu_affinity", "dynamo_use_fullgraph",
    "dynamo_use_dynamic", "dynamo_use_regional_compilation", "use_deepspeed", "use_fsdp",
    "use_parallelism_config", "use_megatron_lm", "use_xpu", "same_network", "no_python",
    "tpu_cluster", "no_tpu_cluster", "tpu_use_sudo", "downcast_bf16",
    "fp8_use_autocast_during_eval", "debug",
)  # fmt: skip

_VALUES = (
    "mixed_precision", "num_cpu_threads_per_process", "dynamo_backend", "dynamo_mode",
    "gpu_ids", "log_dir", "role", "rdzv_backend", "rdzv_conf", "max_restarts",
    "monitor_interval", "vm", "env", "main_training_function", "deepspeed_config_file",
    "zero_stage", "offload_optimizer_device", "offload_param_device",
    "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
    "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_hostfile",
    "deepspeed_exclusion_filter", "deepspeed_inclusion_filter", "deepspeed_multinode_launcher",
    "deepspeed_moe_layer_cls_names", "fsdp_version", "fsdp_offload_params",
    "fsdp_min_num_params", "fsdp_sharding_strategy", "fsdp_reshard_after_forward",
    "fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap", "fsdp_backward_prefetch",
    "fsdp_backward_prefetch_policy", "fsdp_state_dict_type", "fsdp_forward_prefetch",
    "fsdp_use_orig_params", "fsdp_cpu_ram_efficient_loading", "fsdp_sync_module_states",
    "fsdp_activation_checkpointing", "fsdp_activation_checkpointing_offload",
    "megatron_lm_tp_degree", "megatron_lm_use_custom_fsdp", "megatron_lm_no_load_optim",
    "megatron_lm_eod_mask_loss", "megatron_lm_overlap_cpu_optimizer_d2h_h2d",
    "megatron_lm_no_save_optim", "megatron_lm_optimizer_cpu_offload",
    "megatron_lm_use_precision_aware_optimizer", "megatron_lm_decoder_last_pipeline_num_layers",
    "megatron_lm_pp_degree", "megatron_lm_num_micro_batches",
    "megatron_lm_sequence_parallelism", "megatron_lm_recompute_activations",
    "megatron_lm_use_distributed_optimizer", "megatron_lm_gradient_clipping",
    "megatron_lm_recompute_granularity", "megatron_lm_recompute_method",
    "megatron_lm_recompute_num_layers", "megatron_lm_attention_backend",
    "megatron_lm_expert_model_parallel_size", "megatron_lm_context_parallel_size",
    "megatron_lm_attention_dropout", "megatron_lm_hidden_dropout",
    "megatron_lm_attention_softmax_in_fp32", "megatron_lm_expert_tensor_parallel_size",
    "megatron_lm_calculate_per_token_loss", "megatron_lm_use_rotary_position_embeddings",
    "fp8_backend", "fp8_margin", "fp8_interval", "fp8_format", "fp8_amax_history_len",
    "fp8_amax_compute_algo", "fp8_override_linear_precision", "fp8_opt_level",
    "fp8_enable_fsdp_float8_all_gather", "fp8_pad_inner_dim", "aws_access_key_id",
    "aws_secret_access_key", "mpirun_hostfile", "mpirun_ccl",
    "parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size",
    "parallelism_config_tp_size", "parallelism_config_cp_size", "parallelism_config_cp_backend",
    "parallelism_config_cp_comm_strategy", "parallelism_config_sp_size",
    "parallelism_config_sp_backend", "parallelism_config_sp_seq_length",
    "parallelism_config_sp_seq_length_is_variable", "parallelism_config_sp_attn_implementation",
)  # fmt: skip

OPTIONS: tuple[Opt, ...] = (
    flag("help", "-h", "--help", help="Show help and exit."),
    value("config_file", "--config_file", help="accelerate config (YAML) with the defaults."),
    flag("quiet", "--quiet", "-q", help="Shorter tracebacks."),
    value("num_processes", "--num_processes", help="Total number of processes (all machines)."),
    value("num_machines", "--num_machines", help="Number of machines."),
    value("machine_rank", "--machine_rank", help="Rank of this machine."),
    value("main_process_ip", "--main_process_ip", help="Address of machine 0."),
    value("main_process_port", "--main_process_port", help="Port on machine 0."),
    value("tee", "-t", "--tee", help="Tee std streams into log files."),
    flag("module", "-m", "--module", help="Run the entry as a module, like python -m."),
    *(flag(name, "--" + name) for name in _FLAGS if name != "no_python"),
    flag("no_python", "--no_python", help="Run the entry as a program, without python."),
    *(value(name, "--" + name) for name in _VALUES),
)

SPEC = Spec("accelerate launch", OPTIONS, dash_underscore=True, argparse=True)


def matches(argv: Sequence[Word]) -> int | None:
    if not argv:
        return None
    name = basename(argv[0])
    if name == _LAUNCH_PROGRAM:
        return 1
    if name == _CLI_PROGRAM and len(argv) > 1 and argv[1].value == "launch":
        return 2
    found = python_module_start(argv, (_LAUNCH_MODULE,))
    if found is not None:
        return found
    cli = python_module_start(argv, (_CLI_MODULE,))
    if cli is not None and cli < len(argv) and argv[cli].value == "launch":
        return cli + 1
    return None


def _config_path(ctx: Context) -> str | None:
    """accelerate's default config file, when the environment says where it is
    (commands/config/config_args.py: ``expanduser($HF_HOME or
    ${XDG_CACHE_HOME:-~/.cache}/huggingface)/accelerate/default_config.yaml``)."""
    hf_home = ctx.env_value("HF_HOME")
    if "HF_HOME" in ctx.env:
        home_dir = _expanduser(ctx, hf_home) if hf_home else None
    elif "XDG_CACHE_HOME" in ctx.env:
        xdg = ctx.env_value("XDG_CACHE_HOME")
        cache = _expanduser(ctx, xdg) if xdg else None
        home_dir = str(Path(cache) / "huggingface") if cache else None
    else:
        home_dir = _expanduser(ctx, "~/.cache/huggingface")
    return str(Path(home_dir) / "accelerate" / "default_config.yaml") if home_dir else None


def _expanduser(ctx: Context, path: str) -> str | None:
    """``os.path.expanduser`` with the HOME the command runs with (None: not known)."""
    if path != "~" and not path.startswith("~/"):
        return path
    home = ctx.env_value("HOME")
    return home + path[1:] if home else None


class _Config:
    """The config file's values, or why they are not known."""

    def __init__(self, values: Mapping[str, object] | None, label: str, span: Span,
                 unknown: bool) -> None:
        self.values = values or {}
        self.label = label
        self.span = span
        self.unknown = unknown  # a config file is used but cannot be read

    def setting(self, key: str) -> Setting | None:
        if key not in self.values or self.values[key] is None:
            return None
        return Setting(Word.literal(str(self.values[key]), self.span), f"{key} in {self.label}")


def _config(ctx: Context, parsed: Parsed) -> _Config:
    plan = ctx.plan
    use = parsed.get("config_file")
    if use is not None and use.value is not None:
        word = use.value
        if word.value is None:
            not_known(plan, use.flag, word)
            return _Config(None, word.display, word.span, True)
        text = ctx.read_text(word.value)
        if text is None:
            plan.warn(f"the config file {word.value} cannot be read here, so the values it "
                      "holds are not known", word.span, code="unreadable-file")
            return _Config(None, word.value, word.span, True)
        values = load_yaml_mapping(text)
        if values is None:
            plan.warn(f"the config file {word.value} is not a YAML mapping", word.span,
                      code="bad-config")
            return _Config(None, word.value, word.span, True)
        plan.warn(f"accelerate reads the config {word.value}{_summary(values)}", word.span,
                  severity="info", code="config-file")
        return _Config(values, word.value, word.span, False)
    path = _config_path(ctx)
    if path is None or parsed.has("cpu"):
        return _Config(None, "", plan.span, False)
    text = ctx.read_text(path)
    values = load_yaml_mapping(text) if text is not None else None
    if values is not None:
        plan.warn(f"accelerate reads its default config {path}{_summary(values)}", plan.span,
                  severity="info", code="default-config")
    return _Config(values, path, plan.span, False)


def _summary(values: Mapping[str, object]) -> str:
    """What a config says about the processes, for the note that says it was read."""
    said = [f"{key} {values[key]}" for key in ("distributed_type", "num_machines",
                                                "num_processes") if values.get(key) is not None]
    return f" ({', '.join(said)})" if said else ""


# distributed_type values that start a process per device (launch.py's multi_gpu, plus
# DeepSpeed, FSDP and Megatron-LM, which run through their own launchers).
_MULTI = frozenset({"MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA",
                    "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON", "DEEPSPEED", "FSDP",
                    "MEGATRON_LM", "XLA"})
_MODE_FLAGS = ("multi_gpu", "tpu", "tpu_use_cluster", "use_deepspeed", "use_fsdp",
               "use_megatron_lm")


def _single_process(plan: LaunchPlan, parsed: Parsed, config: _Config) -> bool:
    """launch.py's launch_command: with no mode flag, a config whose distributed_type is
    none of the multi-process kinds goes to simple_launcher, one process, whatever its
    num_processes says."""
    if config.unknown or not config.values or any(parsed.has(f) for f in _MODE_FLAGS):
        return False
    kind = config.values.get("distributed_type")
    if kind is None:
        return False
    text = str(kind).upper().removeprefix("DISTRIBUTEDTYPE.")
    if text in _MULTI:
        return False
    plan.warn(f"distributed_type {kind} in {config.label}: accelerate runs the script in one "
              "process (its simple launcher)", config.span, severity="info",
              code="single-process")
    return True


def _multi(parsed: Parsed, config: _Config) -> bool:
    """A mode flag, or a config whose distributed_type starts processes per device (then
    even one process is torchrun's, with RANK)."""
    if config.unknown or any(parsed.has(f) for f in _MODE_FLAGS):
        return True
    kind = config.values.get("distributed_type")
    return kind is not None and str(kind).upper().removeprefix("DISTRIBUTEDTYPE.") in _MULTI


def _rank_in_child(plan: LaunchPlan, here: Span) -> None:
    """launch.py's simple_launcher: the one process is a child python without RANK; the
    bootstrap takes the first Python below accelerate's own as rank 0 (``=0^``)."""
    plan.warn("with one process accelerate runs the script in a child python with no rank "
              "variable (its simple launcher): that child is rank 0", here,
              severity="info", code="rank-in-child")


class _Values:
    """Values from the command line, else from the config file."""

    def __init__(self, plan: LaunchPlan, parsed: Parsed, config: _Config) -> None:
        self.plan, self.parsed, self.config = plan, parsed, config

    def setting(self, name: str) -> Setting | None:
        use = self.parsed.get(name)
        return Setting(use.value, use.flag) if use is not None else self.config.setting(name)

    def number(self, name: str, default: int | None, what: str) -> int | None:
        """A number from the command line, else the config file, else ``default``."""
        found = self.setting(name)
        if found is not None:
            return read_int(self.plan, found.word, found.label) if found.word is not None else None
        parsed, config = self.parsed, self.config
        reasons = [w.display for w in parsed.opaque]
        if config.unknown:
            reasons.append(f"the config file {config.label}")
        if reasons:
            self.plan.warn(f"{what} is not given, and {', '.join(reasons)} may set it",
                           parsed.opaque[0].span if parsed.opaque else config.span)
            return None
        return default


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, SPEC)
    numbers(ctx, parsed, plan.argv[start - 1].span if start > 0 else plan.span)
    launcher_entry(plan, parsed, "accelerate launch", flag_kind(parsed))


def numbers(ctx: Context, parsed: Parsed, here: Span) -> None:
    """The plan's numbers from accelerate's options as read (``parsed``), its config file or
    its default config; ``here`` is where a note about the whole command goes."""
    plan = ctx.plan
    config = _config(ctx, parsed)
    values = _Values(plan, parsed, config)
    if _single_process(plan, parsed, config):
        plan.nnodes, plan.nproc_per_node, plan.world_size, plan.node_rank = 1, 1, 1, 0
        _rank_in_child(plan, here)
        return

    if not parsed.has("num_processes") and config.values.get("num_processes") == -1:
        # launch.py: "You need to manually pass in `--num_processes` using this config yaml."
        plan.warn(f"num_processes is -1 in {config.label}: accelerate refuses to start without "
                  "--num_processes", config.span, code="bad-value", severity="error")
        total = None
    else:
        total = values.number("num_processes", None, "--num_processes")
    if total is None and values.setting("num_processes") is None and not parsed.opaque and (
        not config.unknown
    ):
        visible = visible_devices(ctx)
        seen = f" ({visible} visible)" if visible is not None else ""
        plan.warn("--num_processes is not given: accelerate then starts one process per GPU "
                  f"of the machine{seen}, or what its default config says", here)
    machines = values.number("num_machines", 1, "--num_machines")
    plan.nnodes = machines
    plan.world_size = total
    if total is not None and machines is not None and machines > 0:
        if total % machines == 0:
            plan.nproc_per_node = total // machines
        else:
            plan.warn(f"--num_processes {total} is not a multiple of --num_machines {machines}",
                      here, code="uneven")
    if total == 1 and machines == 1 and not _multi(parsed, config):
        _rank_in_child(plan, here)
    rank_default = 0 if machines == 1 else None
    plan.node_rank = values.number("machine_rank", rank_default, "--machine_rank")
    if plan.node_rank is None and machines is not None and machines > 1 and not (
        parsed.has("machine_rank")
    ):
        plan.warn("--machine_rank is not given for a multi-machine job", here)

    for key, attr in (("main_process_ip", "master_addr"), ("main_process_port", "master_port")):
        found = values.setting(key)
        if found is not None and found.word is not None:
            setattr(plan, attr, found.word)
