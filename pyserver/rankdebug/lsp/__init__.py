"""The language server's parts; ``rankdebug.server`` wires them to pygls.

- ``settings``: what the extension configures, per workspace folder.
- ``positions``: engine spans (code points) to LSP ranges (the client's units).
- ``analysis``: one document version → plans, lenses, diagnostics (runs off the event loop).
- ``documents``: open documents and the newest analysis of each; stale work is skipped.
- ``lenses``, ``hover``, ``checks``, ``actions``: the editor features.
- ``commands``, ``launch_json``: ``workspace/executeCommand`` for the extension.
"""
