"""The language server's parts; ``rankdebug.server`` wires them to pygls.

- ``settings``: what the extension configures, per workspace folder.
- ``positions``: engine spans (code points) to LSP ranges (the client's units).
- ``analysis``: one document version → plans, lenses, diagnostics (runs off the event loop).
- ``documents``: open documents and the newest analysis of each; stale work is skipped,
  bursts of edits are analysed once.
- ``protocol``, ``memory``: pygls' protocol without its per-edit leak and with code lenses
  written from their JSON; garbage collected and memory returned while idle.
- ``lenses``, ``hover``, ``checks``, ``actions``: the editor features.
- ``commands``: ``workspace/executeCommand`` for the extension (adapters over
  ``rankdebug.debugplan``).

What the extension relies on:

- Documents: language ids ``shellscript`` and ``markdown``, and files ending in ``.sh``,
  ``.bash``, ``.slurm``, ``.sbatch`` (any language id). Sync: incremental or full.
- Code lenses run extension-side commands ``rankdebug.debugCommand`` and
  ``rankdebug.pickRanks`` with arguments ``[uri, line]`` (``line`` 0-based, the first
  line of the command).
- Server commands (registered in VS Code by vscode-languageclient; the extension must not
  register them itself): ``rankdebug.plan``, ``rankdebug.debugPlan``,
  ``rankdebug.launchJson``, ``rankdebug.checkRanks``; arguments and results in
  ``commands``.
- Diagnostics: ``source`` ``"rankdebug"``, ``code`` as in ``checks`` and the engine;
  quick fixes carry ``data = {"fix", "title"}``.
- Settings (section ``rankdebug``, camelCase): see ``settings._FIELDS``.
"""
