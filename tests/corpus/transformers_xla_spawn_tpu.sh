export TPU_NUM_CORES=8

# the proper usage is documented in the README, you need to specify data_dir, output_dir
# and model_name_or_path
python xla_spawn.py --num_cores $TPU_NUM_CORES \
    finetune_trainer.py \
    --learning_rate=3e-5 \
    --do_train --do_eval --evaluate_during_training \
    --prediction_loss_only \
    --n_val 1000 \
    "$@"

export BS=64
export m=sshleifer/student_marian_en_ro_6_3
python xla_spawn.py finetune_trainer.py \
    --tokenizer_name $m --model_name_or_path $m \
    --per_device_train_batch_size=$BS --num_train_epochs=6 \
    --do_train --do_eval \
    "$@"
