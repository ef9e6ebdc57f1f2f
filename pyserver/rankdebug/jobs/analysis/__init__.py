"""Reading many ranks as a few: stacks (every rank's stack, from its handler or
py-spy, grouped), stack_tree (the merged tree), odd_ones (the sampled odd one out),
collective_check (who skipped a collective), compare and compare_per (a value across
ranks, in groups of equal value, within a parallel dimension)."""
