"""pygls' ``LanguageServerProtocol`` with two changes the server needs under load.

- A handler's future is forgotten once the handler is done. pygls 2.1 files the future of
  every handler it runs in ``_request_futures``; a request's is removed when its response
  is sent, but a notification's (``didOpen``, ``didChange``, ``didClose``: generator
  handlers) and that of each handler a generator yields to (our ``didChange`` feature, an
  ``executeCommand`` command) is filed under a fresh uuid that nothing removes: a future,
  with its lock, condition and result, per edit, for as long as the server runs.
- A response whose result is :class:`rankdebug.lsp.lenses.Lenses` is written from the
  JSON the lenses carry. pygls knows a response's result only as ``Any``; it would walk
  and encode a thousand lenses of a long script again on every request (~15 ms).
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from typing import Any

from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import JsonRPCProtocol, JsonRPCResponseMessage, LanguageServerProtocol

from rankdebug.lsp.lenses import Lenses

logger = logging.getLogger(__name__)


class Protocol(LanguageServerProtocol):
    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any,
                         args: tuple[Any, ...] | None = None,
                         kwargs: dict[str, Any] | None = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(functools.partial(self._forget, msg_id))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(data, JsonRPCResponseMessage) or not isinstance(result, Lenses):
            super()._send_data(data)
            return
        if self.writer is None or inspect.iscoroutinefunction(self.writer.write):
            data.result = json.loads(result.json)  # pygls' own way, for such a writer too
            super()._send_data(data)
            return
        body = (f'{{"id": {json.dumps(data.id)}, "jsonrpc": "{JsonRPCProtocol.VERSION}", '
                f'"result": {result.json}}}')
        header = (f"Content-Length: {len(body)}\r\n"
                  f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n")
        out = (header + body if self._include_headers else body).encode(self.CHARSET)
        try:
            self.writer.write(out)
        except BrokenPipeError:
            logger.exception("cannot send the code lenses: the client is gone")
            raise
        except Exception as error:
            logger.exception("cannot send the code lenses")
            self._server._report_server_error(error, JsonRpcInternalError)
