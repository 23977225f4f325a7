"""Help-desk agent (seed 001): answers questions about the "XYZ system" from its manuals and Q&A.

- ``agent``: ``HelpDeskAgent`` and ``run_agent(question) -> AgentResult``.
- ``graph``: create_plan → one ``Send`` per subtask → execute_subtasks (select_tools →
  execute_tools → create_subtask_answer → reflect_subtask, at most ``MAX_CHALLENGE_COUNT``
  rounds) → create_answer (``answer``). ``models``, ``prompts`` (``HelpDeskAgentPrompts``),
  ``context`` (what the nodes use besides the state), ``toolcalls``, ``progress``.
- ``grounding``: what an answer may rest on: the relevance floor, the citation check against
  the hits retrieved for the question, and why an attempt cannot resolve its subtask.
- ``knowledge``: ingestion of manuals and a Q/A CSV into an index directory, ``KnowledgeBase``
  with BM25 manual search and Qdrant (or BM25) Q/A search; ``tools``: the LangChain tools
  ``search_manual`` and ``search_qa``.

Nothing is imported here, so the knowledge base can be used without loading LangGraph and the
LLM layer (``keiri-agent helpdesk search``); import from the submodules.
"""
