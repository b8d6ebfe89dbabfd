"""Capture [traceloop-llamaindex.no_content]: OpenLLMetry's opentelemetry-instrumentation-llamaindex (with
opentelemetry-instrumentation-openai for the LLM calls, as OpenLLMetry sets them up) with TRACELOOP_TRACE_CONTENT=false,
llama-index-llms-openai against the OpenAI stand-in (batch2_standin.py), a local hashed bag-of-words embedding model
(no network). Same app as openinference-llama-index.hidden.py.

a/f: llm.chat([system, user]); h: llm.stream_chat (stream_options.include_usage via additional_kwargs);
c: FunctionAgent(tools=[get_weather]).run(...) (the agent streams its LLM calls);
d: VectorStoreIndex over 3 in-memory TextNodes (kb-001..kb-003, built before the capture),
   as_query_engine(similarity_top_k=2, text_qa_template=[system, 'Context: ... Question: ...']).query(question).
Run inside the configuration's venv: python traceloop-llamaindex.no_content.py [--no-manifest]
"""

import asyncio
import hashlib
import os
import re
import sys

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

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

CONFIG = "traceloop-llamaindex.no_content"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

LlamaIndexInstrumentor().instrument(tracer_provider=cap.tracer_provider, logger_provider=cap.logger_provider)
OpenAIInstrumentor().instrument(tracer_provider=cap.tracer_provider, logger_provider=cap.logger_provider)
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

if "--no-manifest" in sys.argv:
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "present",
        "tokens": "present", "finish_reason": "present", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE), "h_streaming_chat": dict(NONE),
            "c_tool_call": {**NONE, "tool_names": "present", "tool_arguments": "present", "tokens": "absent"},
            "d_rag": {**NONE, "retrieval_document_ids": "absent", "retrieval_document_content": "absent"},
            "f_error": {**NONE, "response_model": "absent", "tokens": "absent", "finish_reason": "absent",
                        "response_id": "absent"}}
COMMON = ("LLM calls: CLIENT spans 'openai.chat' from opentelemetry-instrumentation-openai 0.62.4 (scope "
          "opentelemetry.instrumentation.openai.v1: request/response model, response id, finish_reasons, usage, "
          "gen_ai.request.temperature 0.1, gen_ai.is_streaming); framework steps: INTERNAL '<Class>.task' / "
          "'<Class>.workflow' spans of scope opentelemetry.instrumentation.llamaindex 0.62.4 (traceloop.span.kind, "
          "traceloop.entity.name, traceloop.workflow.name, no gen_ai.* except on the embedding span). With "
          "TRACELOOP_TRACE_CONTENT=false no traceloop.entity.input / output and no gen_ai.prompt.* / completion.*; "
          "no log records. The llamaindex instrumentation logs 'Failed to detach context ... ValueError: <Token "
          "var=<ContextVar name='current_context'...> was created in a different Context' during the agent run, "
          "but every scenario is still one trace.")
NOTES = {
    "a_chat_correct": COMMON + " One 'openai.chat' span (llm.chat is not wrapped by a llamaindex span).",
    "c_tool_call": COMMON + " 'FunctionAgent.workflow' > 10 'BaseWorkflowAgent.task' spans, 'FunctionTool.task', "
                   "and two streamed 'openai.chat' spans (the agent streams without include_usage: NO usage; "
                   "finish_reasons ['tool_call'] then ['stop']; content-free 'gen_ai.content.completion.chunk' "
                   "events). CONTENT IN CLEAR despite TRACELOOP_TRACE_CONTENT=false: one 'BaseWorkflowAgent.task' "
                   "span carries tool.name='get_weather' and tool.arguments='{\"city\": \"Paris\"}'; the tool result "
                   "and call id are not recorded.",
    "d_rag": COMMON + " 'RetrieverQueryEngine.workflow' > RetrieverQueryEngine / CompactAndRefine / "
             "DefaultRefineProgram / TokenTextSplitter / VectorIndexRetriever / HashEmbedding '.task' spans (the "
             "embedding task has gen_ai.operation.name='embeddings', gen_ai.request.model='privacy-hash-embedding') "
             "and one 'openai.chat' (60/20 tokens). No retrieval document ids, scores or texts anywhere.",
    "f_error": COMMON + " 'openai.chat' status ERROR \"Error code: 500 - {'error': ...}\", error.type="
               "'InternalServerError', an 'exception' event.",
    "h_streaming_chat": COMMON + " llm.stream_chat with include_usage: usage recorded, 6 empty chunk events.",
}
SETTINGS = {"how privacy mode was set": "environment TRACELOOP_TRACE_CONTENT=false before "
                                        "LlamaIndexInstrumentor().instrument(...) and OpenAIInstrumentor()."
                                        "instrument(...) (tracer and logger provider passed)",
            "is_library_default": False,
            "switch_to_capture_content": "TRACELOOP_TRACE_CONTENT=true (or unset: the default is 'true'); with the "
                                         "traceloop-sdk, Traceloop.init(trace_content=True)"}
GT = {"d_rag": {"user_input": RAG_QUESTION, "system_prompt": RAG_SYSTEM, "final_output": RAG_ANSWER,
                "input_tokens": RAG_USAGE[0], "output_tokens": RAG_USAGE[1], "response_model": OPENAI_RESPONSE_MODEL,
                "retrieved_documents": [{"id": i, "score": sc} for i, sc in SOURCES]}}
write_capture_json2(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-llamaindex", "opentelemetry-instrumentation-openai",
     "opentelemetry-semantic-conventions-ai", "llama-index-core", "llama-index-llms-openai", "llama-index-workflows",
     "llama-index-instrumentation", "openai", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-instrumentation", "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/traceloop-llamaindex.no_content.py", GT)
