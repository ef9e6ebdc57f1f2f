"""A job's other nodes (multi-node, ``--hosts``): remote (one node over SSH: its
folder, its runner, forwarded sockets), runner (the process there that starts and watches
that node's part), spread (what srun, mpirun and deepspeed carry to the ranks they start),
watch (the supervisor's view of them: start, signal, forward, end). The reading verbs
across a job's hosts are ``jobs/nodes/``; both reach hosts through ``rankdebug/ssh.py``."""
