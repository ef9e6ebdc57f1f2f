# Composer's launcher (docs/source/notes/distributed_training.rst, using_the_trainer.rst)
composer -n 8 my_training_script.py

composer -n 8 --stdout stdout_{rank}.log --stderr stderr_{rank}.log script.py

# Two nodes, the second one (composer/cli/launcher.py's multi-node arguments)
composer -n 8 --world_size 16 --node_rank 1 --master_addr 10.0.0.1 --master_port 7501 run_trainer.py --max_duration 1ep
