"""Capture [openinference-llama-index.hidden]: openinference-instrumentation-llama-index with
OPENINFERENCE_HIDE_INPUTS=true and OPENINFERENCE_HIDE_OUTPUTS=true, llama-index-llms-openai against the OpenAI
stand-in (batch2_standin.py), a local hashed bag-of-words embedding model (no network).

a/f: llm.chat([system, user]); h: llm.stream_chat (stream_options.include_usage via additional_kwargs);
c: FunctionAgent(tools=[get_weather]).run(...) (the agent streams its LLM calls);
d: VectorStoreIndex over 3 in-memory TextNodes (kb-001..kb-003, built before the capture),
   as_query_engine(similarity_top_k=2, text_qa_template=[system, 'Context: ... Question: ...']).query(question).
Run inside the configuration's venv: python openinference-llama-index.hidden.py [--no-manifest]
"""

import asyncio
import hashlib
import os
import re
import sys

os.environ["OPENINFERENCE_HIDE_INPUTS"] = "true"
os.environ["OPENINFERENCE_HIDE_OUTPUTS"] = "true"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import (  # noqa: E402
    PRIVACY_DIR,
    RAG_ANSWER,
    RAG_QUESTION,
    RAG_SYSTEM,
    RAG_USAGE,
    STATE,
    Capture,
    start_standin,
)
from sdk_privacy_standin import (  # noqa: E402
    ANSWER,
    ERROR_USER,
    OPENAI_RESPONSE_MODEL,
    SYSTEM,
    TOOL_ANSWER,
    TOOL_SYSTEM,
    TOOL_USER,
    USER,
)
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

CONFIG = "openinference-llama-index.hidden"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor  # noqa: E402

LlamaIndexInstrumentor().instrument(tracer_provider=cap.tracer_provider)
from llama_index.core import Settings, VectorStoreIndex  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.embeddings import BaseEmbedding  # noqa: E402
from llama_index.core.prompts import ChatPromptTemplate  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.llms.openai import OpenAI  # noqa: E402

STOP = {"the", "a", "an", "is", "for", "of", "in", "to", "and", "can", "be", "what", "are", "you", "at", "any", "but"}
DOCS = [
    ("kb-001", "Refund policy: annual plans can be refunded in full within 30 days of purchase.",
     {"source": "policies/refunds.md", "section": "annual"}),
    ("kb-002", "Monthly plans are non-refundable, but you can cancel at any time to stop future billing.",
     {"source": "policies/refunds.md", "section": "monthly"}),
    ("kb-003", "Support is available Monday to Friday, 9:00 to 17:00 CET, by chat and email.",
     {"source": "support/hours.md", "section": "hours"}),
]


class HashEmbedding(BaseEmbedding):
    """Deterministic local embedding: hashed bag of words (64 dims, stopwords removed), L2-normalised."""

    def _vec(self, text: str) -> list[float]:
        vec = [0.0] * 64
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if word not in STOP:
                vec[int(hashlib.md5(word.rstrip("s").encode()).hexdigest(), 16) % 64] += 1.0
        norm = sum(v * v for v in vec) ** 0.5 or 1.0
        return [v / norm for v in vec]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)


server, url = start_standin()
common = {"model": "gpt-4o-mini", "api_base": url + "/v1", "api_key": "sk-privacy-standin", "max_retries": 0}
llm = OpenAI(**common)
llm_stream = OpenAI(**common, additional_kwargs={"stream_options": {"include_usage": True}})
Settings.llm = llm
Settings.embed_model = HashEmbedding(model_name="privacy-hash-embedding")
index = VectorStoreIndex([TextNode(id_=i, text=t, metadata=m, excluded_embed_metadata_keys=list(m),
                                   excluded_llm_metadata_keys=list(m)) for i, t, m in DOCS])
cap.span_exporter.clear()  # the index build is not part of any scenario

chat = [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=USER)]
assert llm.chat(chat).message.content == ANSWER
cap.dump("a_chat_correct")


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return _weather(city)


async def run_agent() -> str:
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(get_weather)], llm=llm, system_prompt=TOOL_SYSTEM)
    return str(await agent.run(user_msg=TOOL_USER))


_agent_answer = asyncio.run(run_agent())
assert _agent_answer == TOOL_ANSWER, (_agent_answer, [r["body"] for r in STATE.requests[-2:]])
cap.dump("c_tool_call")

template = ChatPromptTemplate([ChatMessage(role="system", content=RAG_SYSTEM),
                               ChatMessage(role="user", content="Context:\n{context_str}\n\nQuestion: {query_str}")])
response = index.as_query_engine(similarity_top_k=2, text_qa_template=template).query(RAG_QUESTION)
assert str(response) == RAG_ANSWER, str(response)
SOURCES = [(n.node.node_id, n.score) for n in response.source_nodes]
print("d_rag sources:", SOURCES)
cap.dump("d_rag")

STATE.fail_next = True
try:
    llm.chat([ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=ERROR_USER)])
except Exception as exc:  # the app catches it
    print("f_error raised as expected:", type(exc).__name__)
else:
    raise SystemExit("f_error: the call did not raise")
cap.dump("f_error")

assert "".join(c.delta or "" for c in llm_stream.stream_chat(chat)) == ANSWER
cap.dump("h_streaming_chat")
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

R = "masked:__REDACTED__"
HIDDEN = {"input": R, "output": R, "system_prompt": R, "tool_arguments": "absent", "tool_results": "absent",
          "tool_names": "absent", "request_model": "present", "response_model": "absent", "tokens": "present",
          "finish_reason": "present", "response_id": "absent"}
RECORDED = {"a_chat_correct": dict(HIDDEN), "h_streaming_chat": dict(HIDDEN),
            "c_tool_call": {**HIDDEN, "tool_arguments": R, "tool_results": R, "tool_names": "present",
                            "tokens": "absent"},
            "d_rag": {**HIDDEN, "system_prompt": "present", "retrieval_document_ids": "present",
                      "retrieval_document_content": R},
            "f_error": {**HIDDEN, "output": "absent", "tokens": "absent", "finish_reason": "absent"}}
COMMON = ("Scope openinference.instrumentation.llama_index 4.6.1, no schema_url, all spans INTERNAL with status "
          "explicitly OK; LLM spans (openinference.span.kind=LLM): llm.model_name = the configured REQUEST model "
          "'gpt-4o-mini' (the response model and response id are recorded nowhere), llm.provider/llm.system=openai, "
          "llm.invocation_parameters (llama-index's metadata JSON, no messages), llm.finish_reason, "
          "llm.token_count.*. Hidden: input.value / output.value = '__REDACTED__' on every span that has them; "
          "llm.input_messages.* / llm.output_messages.* dropped.")
NOTES = {
    "a_chat_correct": COMMON + " One span 'OpenAI.chat'.",
    "c_tool_call": COMMON + " FunctionAgent.run > BaseWorkflowAgent.* CHAIN spans, per turn an LLM-kind "
                   "'OpenAI._prepare_chat_with_tools' (no tokens, no finish reason, no request made) and an LLM-kind "
                   "'OpenAI.astream_chat' (the agent STREAMS without include_usage: no token counts; finish reasons "
                   "'tool_calls' then 'stop'; a 'First Token Stream Event' event), so 4 LLM-kind spans for 2 API "
                   "calls. TOOL span 'FunctionTool.acall': tool.name='get_weather', tool.description, "
                   "tool.parameters (JSON schema) in clear; its input.value (arguments) and output.value (result) "
                   "'__REDACTED__'; no tool call id.",
    "d_rag": COMMON + " RetrieverQueryEngine.query > ... > EMBEDDING 'HashEmbedding.get_query_embedding', RETRIEVER "
             "'VectorIndexRetriever.retrieve' (retrieval.documents.N.document.id kb-001/kb-002 and .score in clear, "
             ".content and .metadata '__REDACTED__'), CompactAndRefine/TokenTextSplitter CHAIN spans, LLM "
             "'OpenAI.predict' and 'OpenAI.chat' (tokens 60/20). CONTENT IN CLEAR despite HIDE_INPUTS/OUTPUTS "
             "(see unmasked_content): the question in embedding.embeddings.0.embedding.text (covered by "
             "OPENINFERENCE_HIDE_EMBEDDINGS_TEXT, not by HIDE_INPUTS) and the embedding vector; on 'OpenAI.predict' "
             "llm.prompt_template.template (holds the system prompt: 'system: Answer the question using only the "
             "provided context.\\nuser: Context:...') and llm.prompt_template.variables (JSON with context_str = "
             "the two retrieved documents' full text and query_str = the question): no OPENINFERENCE_HIDE_* switch "
             "covers the prompt template.",
    "f_error": COMMON + " 'OpenAI.chat' status ERROR \"InternalServerError: Error code: 500 - {'error': ...}\" with "
               "an 'exception' event (openai.InternalServerError); input.value '__REDACTED__', no output.value.",
    "h_streaming_chat": COMMON + " 'OpenAI.stream_chat' with include_usage: tokens and finish reason recorded, a "
                        "'First Token Stream Event' span event.",
}
SETTINGS = {"how privacy mode was set": "environment OPENINFERENCE_HIDE_INPUTS=true and OPENINFERENCE_HIDE_OUTPUTS="
                                        "true before LlamaIndexInstrumentor().instrument(tracer_provider=...)",
            "is_library_default": False,
            "switch_to_capture_content": "unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS (or =false); "
                                         "in code instrument(config=TraceConfig(hide_inputs=False, "
                                         "hide_outputs=False)). Library default records everything."}
GT = {"d_rag": {"user_input": RAG_QUESTION, "system_prompt": RAG_SYSTEM, "final_output": RAG_ANSWER,
                "input_tokens": RAG_USAGE[0], "output_tokens": RAG_USAGE[1], "response_model": OPENAI_RESPONSE_MODEL,
                "retrieved_documents": [{"id": i, "score": sc} for i, sc in SOURCES]},
      "c_tool_call": {"input_tokens": 81 + 112, "output_tokens": 15 + 12}}
FILE_EXTRA = {"d_rag": {"unmasked_content": {
    "user_input": ["embedding.embeddings.0.embedding.text", "llm.prompt_template.variables (query_str)"],
    "system_prompt": ["llm.prompt_template.template"],
    "retrieved_document_content": ["llm.prompt_template.variables (context_str)"]}}}
write_capture_json2(
    CONFIG, "openai",
    ["openinference-instrumentation-llama-index", "openinference-instrumentation", "openinference-semantic-conventions",
     "llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "llama-index-instrumentation", "openai",
     "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/openinference-llama-index.hidden.py", GT, file_extra=FILE_EXTRA)
