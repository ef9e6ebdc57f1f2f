#!/usr/bin/env python
# Trimmed from facebookresearch/detectron2 tools/train_net.py (Apache-2.0): how it reads its
# arguments and starts its workers. The corpus plans read this file; it is never run.
from detectron2.engine import default_argument_parser, default_setup, launch  # noqa: F401


def main(args):
    raise SystemExit("corpus stand-in: not for running")


def invoke_main() -> None:
    args = default_argument_parser().parse_args()
    print("Command Line Args:", args)
    launch(
        main,
        args.num_gpus,
        num_machines=args.num_machines,
        machine_rank=args.machine_rank,
        dist_url=args.dist_url,
        args=(args,),
    )


if __name__ == "__main__":
    invoke_main()  # pragma: no cover
