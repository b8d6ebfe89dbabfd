"""MCP metrics: which tools an agent selected over MCP and whether the expected MCP operations ran.

The tool calls come from any convention; MCP client and server spans (``mcp.method.name = tools/call``) are
merged into the case's tool calls by evald/mapping/mcp.py.
"""

METRICS: dict[str, str] = {
    "tool_selection_accuracy": "evald.metrics.mcp.tool_selection_accuracy:ToolSelectionAccuracyMetric",
    "mcp_trace_completeness": "evald.metrics.mcp.mcp_trace_completeness:MCPTraceCompletenessMetric",
}
