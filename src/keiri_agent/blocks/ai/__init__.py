"""AI blocks: structured LLM processing of evidence (seed 002 §4 ``ai.process_llm``)."""
