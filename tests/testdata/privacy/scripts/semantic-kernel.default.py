"""Capture [semantic-kernel.default]: Semantic Kernel's native telemetry with diagnostics ON but sensitive data OFF
(SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true, ..._SENSITIVE unset), ChatCompletionAgent on
OpenAIChatCompletion against the OpenAI stand-in (sdk_privacy_standin.py).

SK writes message content on python-logging records (only in sensitive mode); as SK's telemetry docs show, the SDK
LoggingHandler with logging.Filter('semantic_kernel') at INFO is attached, so whatever SK logs is in <scenario>.logs.pb.
Run inside the configuration's venv: python semantic-kernel.default.py [--no-manifest]
"""

import asyncio
import logging
import os
import sys

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ.pop("SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE", None)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, Capture, start_standin  # noqa: E402
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_ANSWER, TOOL_SYSTEM, TOOL_USER, USER  # noqa: E402
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

CONFIG = "semantic-kernel.default"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)  # sets the global tracer and logger providers SK uses
from opentelemetry.sdk._logs import LoggingHandler  # noqa: E402

handler = LoggingHandler(logger_provider=cap.logger_provider)
handler.addFilter(logging.Filter("semantic_kernel"))
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.INFO)

from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402


class WeatherPlugin:
    @kernel_function(name="get_weather", description="Get the current weather for a city.")
    def get_weather(self, city: str) -> str:
        return _weather(city)


server, url = start_standin()


def service() -> OpenAIChatCompletion:
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=AsyncOpenAI(
        base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0))


async def main() -> None:
    assistant = ChatCompletionAgent(service=service(), name="Assistant", instructions=SYSTEM)
    reply = await assistant.get_response(messages=USER)
    assert str(reply.content) == ANSWER, reply
    cap.dump("a_chat_correct")

    weather = ChatCompletionAgent(service=service(), name="WeatherAssistant", instructions=TOOL_SYSTEM,
                                  plugins=[WeatherPlugin()], arguments=None)
    settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
    from semantic_kernel.functions import KernelArguments

    reply = await weather.get_response(messages=TOOL_USER, arguments=KernelArguments(settings=settings))
    assert str(reply.content) == TOOL_ANSWER, reply
    cap.dump("c_tool_call")

    STATE.fail_next = True
    try:
        await assistant.get_response(messages=ERROR_USER)
    except Exception as exc:  # the app catches it
        print("f_error raised as expected:", type(exc).__name__)
    else:
        raise SystemExit("f_error: the call did not raise")
    cap.dump("f_error")

    text = ""
    async for chunk in assistant.invoke_stream(messages=USER):
        text += str(chunk.content)
    assert text == ANSWER, text
    cap.dump("h_streaming_chat")


asyncio.run(main())
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream")), [t["function"]["name"] for t in r["body"].get(
    "tools") or []]) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "absent",
        "tokens": "present", "finish_reason": "present", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE), "h_streaming_chat": dict(NONE),
            "c_tool_call": {**NONE, "tool_names": "present", "tool_arguments": "present"},
            "f_error": {**NONE, "tokens": "absent", "finish_reason": "absent", "response_id": "absent"}}
COMMON = ("SK's own spans, all INTERNAL, success status UNSET, no schema_url, scopes per SK module: 'invoke_agent "
          "<name>' (agent_diagnostics; gen_ai.agent.id/name) > 'AutoFunctionInvocationLoop' (sk.available_functions) "
          "> 'chat gpt-4o-mini' (model_diagnostics: gen_ai.system=openai (old key, no gen_ai.provider.name), "
          "gen_ai.request.model, server.address = the full base URL 'http://127.0.0.1:<port>/v1/', gen_ai.response.id, "
          "gen_ai.response.finish_reason (singular key, enum repr 'FinishReason.STOP'), usage; NO "
          "gen_ai.response.model). Without _SENSITIVE there are no gen_ai.* content log events (no "
          "gen_ai.system.message / gen_ai.user.message / gen_ai.choice). The .logs.pb holds SK's ordinary python "
          "logging at INFO (the LoggingHandler SK's docs show): 'OpenAI usage: CompletionUsage(...)' per call.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Tool is named 'WeatherPlugin-get_weather' on the wire and in spans (plugin-function "
                   "naming). 'execute_tool WeatherPlugin-get_weather' carries gen_ai.tool.name, gen_ai.tool.call.id "
                   "and gen_ai.tool.description (no arguments/result); 'invoke_agent WeatherAssistant' carries "
                   "gen_ai.tool.definitions. TOOL ARGUMENTS LEAK into the ordinary INFO log record of scope "
                   "semantic_kernel.kernel: body 'Calling WeatherPlugin-get_weather function with args: "
                   "{\"city\": \"Paris\"}' (free text, no event name); the tool result is not logged. Other log "
                   "bodies: 'processing 1 tool calls in parallel.', 'Function WeatherPlugin-get_weather invoking.', "
                   "'... succeeded.', 'Function completed. Duration: ...'. First chat span finish reason "
                   "'FinishReason.TOOL_CALLS'.",
    "f_error": COMMON + " chat, AutoFunctionInvocationLoop and invoke_agent spans: status ERROR "
               "'ServiceResponseException: (\"<class '...OpenAIChatCompletion'> "
               "service failed to complete the prompt\", "
               "InternalServerError('Error code: 500 - ...'))' and an 'exception' event each; error.type on the chat "
               "span is the class repr \"<class 'semantic_kernel.exceptions.service_exceptions."
               "ServiceResponseException'>\", on invoke_agent 'ServiceResponseException'.",
    "h_streaming_chat": COMMON + " agent.invoke_stream: the chat span looks like the non-streaming one (no stream "
                        "flag); usage from the include_usage chunk.",
}
SETTINGS = {"how privacy mode was set": "environment SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true, "
                                        "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE unset "
                                        "(read when semantic_kernel is imported); global SDK tracer/logger providers",
            "is_library_default": False,
            "switch_to_capture_content": "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true "
                                         "(content then goes to python-logging records that must be bridged to OTel "
                                         "logs; with both unset SK writes no GenAI spans at all)"}
GT = {"c_tool_call": {"tool_calls": ["WeatherPlugin-get_weather"]}}
write_capture_json2(
    CONFIG, "openai",
    ["semantic-kernel", "openai", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/semantic-kernel.default.py", GT)
