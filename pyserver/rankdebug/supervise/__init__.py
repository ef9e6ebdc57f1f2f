"""``rankdebug launch``: run a job with chosen ranks under the debugger, and stop it cleanly."""
