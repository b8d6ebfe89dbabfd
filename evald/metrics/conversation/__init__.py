"""Conversation metrics: how many turns a chat took and whether it reached its intended end state."""

METRICS: dict[str, str] = {
    "turn_count": "evald.metrics.conversation.turn_count:TurnCountMetric",
    "conversation_resolution": "evald.metrics.conversation.conversation_resolution:ConversationResolutionMetric",
    "conversation_coherence": "evald.metrics.conversation.conversation_coherence:ConversationCoherenceMetric",
    "goal_accuracy": "evald.metrics.conversation.goal_accuracy:GoalAccuracyMetric",
    "knowledge_retention": "evald.metrics.conversation.knowledge_retention:KnowledgeRetentionMetric",
    "turn_efficiency": "evald.metrics.conversation.turn_efficiency:TurnEfficiencyMetric",
    "conversation_completeness": "evald.metrics.conversation.conversation_completeness:ConversationCompletenessMetric",
    "turn_relevancy": "evald.metrics.conversation.turn_relevancy:TurnRelevancyMetric",
    "role_adherence": "evald.metrics.conversation.role_adherence:RoleAdherenceMetric",
    "topic_adherence": "evald.metrics.conversation.topic_adherence:TopicAdherenceMetric",
}
