"""The reading verbs across a job's nodes (``--hosts``; the launch side is
``supervise/nodes/``, and both reach hosts through ``rankdebug/ssh.py``): across (one verb
asked of every host at once, the answers merged), agent_link and node_agent (a warm agent on
each host that answers without a new Python start), fanin (each node reduces its own ranks'
answer; this machine merges one answer per node), tunnel (a debugger's connection to a rank
on another host, relayed through SSH)."""
