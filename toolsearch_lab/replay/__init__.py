"""Replaying real runs: transcripts of the Anthropic Messages API, the OpenAI Responses API and Claude Code
sessions turned into the :class:`~toolsearch_lab.trace.RunTrace` the widgets read
(:func:`~toolsearch_lab.replay.load.load_transcript`)."""
