"""Conversation metrics: how many turns a chat took and whether it reached its intended end state."""

METRICS: dict[str, str] = {
    "turn_count": "evald.metrics.conversation.turn_count:TurnCountMetric",
    "conversation_resolution": "evald.metrics.conversation.conversation_resolution:ConversationResolutionMetric",
}
