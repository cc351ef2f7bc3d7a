"""The elicitation form the task test tools ask with."""

from __future__ import annotations

from mcpbind import types as t

__all__ = ["ask_llm", "ask_name", "llm_text"]


def ask_name() -> t.ElicitRequestFormParams:
    """``Name?``: one string field, ``name``."""
    return t.ElicitRequestFormParams(
        message="Name?",
        requested_schema=t.ElicitRequestFormParamsRequestedSchema(
            type="object", properties={"name": t.StringSchema(type="string")}
        ),
    )


def ask_llm(prompt: str) -> t.CreateMessageRequestParams:
    """One user message, ``prompt``, for the client's LLM."""
    message = t.SamplingMessage(role="user", content=t.TextContent(text=prompt))
    return t.CreateMessageRequestParams(messages=[message], max_tokens=64)


def llm_text(result: t.CreateMessageResult) -> str:
    """The text of a sampling result (a single text block)."""
    content = result.content
    return content.text if isinstance(content, t.TextContent) else repr(content)
