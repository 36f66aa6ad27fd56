"""Shapes of the recall and context-pack API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import JSONInputSerializer, RFC3339DateTimeField
from memories.models import MemoryType, Reliability
from retrieval import augment
from retrieval.pipeline import QUERY_TYPES
from retrieval.scoring import PROFILES, SIGNALS


class ConversationTurnSerializer(JSONInputSerializer):
    speaker = serializers.ChoiceField(choices=["user", "assistant", "system", "tool"])
    content = serializers.CharField(allow_blank=True, max_length=20000)
    timestamp = RFC3339DateTimeField(required=False, allow_null=True)


class UiStateSerializer(JSONInputSerializer):
    route = serializers.CharField(required=False, allow_blank=True, max_length=500)
    open_file = serializers.CharField(required=False, allow_blank=True, max_length=500)
    selection_text = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    tag_filters = serializers.ListField(child=serializers.CharField(max_length=40), required=False,
                                        max_length=24)


class RecallFiltersSerializer(JSONInputSerializer):
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    kind = serializers.CharField(required=False, max_length=40)
    tags = serializers.ListField(child=serializers.CharField(max_length=40), required=False,
                                 max_length=24, help_text="A memory must carry all of these.")
    reliability = serializers.ChoiceField(choices=Reliability.choices, required=False)
    after = RFC3339DateTimeField(required=False, help_text="occurred_at (else created_at) ≥ this")
    before = RFC3339DateTimeField(required=False, help_text="occurred_at (else created_at) < this")
    include_archived = serializers.BooleanField(required=False, default=False)

    def validate(self, data):
        if data.get("after") and data.get("before") and data["after"] >= data["before"]:
            raise serializers.ValidationError({"before": ["Must be later than after."]})
        return data


class ThresholdsSerializer(JSONInputSerializer):
    similarity = serializers.FloatField(required=False, min_value=0, max_value=1)
    composite_min = serializers.FloatField(required=False, min_value=0, max_value=1)
    exact_exception = serializers.FloatField(required=False, min_value=0, max_value=1)
    confidence_exception = serializers.FloatField(required=False, min_value=0, max_value=1)
    lexical = serializers.FloatField(required=False, min_value=0, max_value=1.01)


@extend_schema_field({
    "type": "object",
    "properties": {name: {"type": "number", "minimum": 0, "maximum": 1} for name in SIGNALS},
    "additionalProperties": False,
})
class SignalWeightsField(serializers.DictField):
    """Weights by signal name: the schema lists the names, as the server accepts no other."""


class RecallInputSerializer(JSONInputSerializer):
    query = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")
    # many=True hands max_length to the ListSerializer; the stubs' __init__ does not take it.
    current_conversation = ConversationTurnSerializer(many=True, required=False,  # type: ignore[call-arg]
                                                      max_length=200)
    last_n_turns = serializers.IntegerField(required=False, min_value=0, max_value=50, default=8)
    active_task = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
    ui_state = UiStateSerializer(required=False)
    spaces = serializers.ListField(child=serializers.SlugField(), required=False, max_length=50,
                                   help_text="Space slugs; default: every space you can read.")
    k = serializers.IntegerField(required=False, min_value=1, max_value=50, default=5)
    query_type = serializers.ChoiceField(choices=QUERY_TYPES, required=False, default="semantic")
    topic = serializers.CharField(required=False, allow_blank=True, max_length=40, default="",
                                  help_text="A tag, for query_type=topic.")
    filters = RecallFiltersSerializer(required=False)
    profile = serializers.ChoiceField(choices=sorted(PROFILES), required=False, allow_null=True)
    weights = SignalWeightsField(child=serializers.FloatField(min_value=0, max_value=1),
                                 required=False, help_text=f"Override weights of: {', '.join(SIGNALS)}.")
    thresholds = ThresholdsSerializer(required=False)
    token_budget = serializers.IntegerField(required=False, min_value=1, max_value=200000,
                                            allow_null=True)
    as_of = RFC3339DateTimeField(required=False, allow_null=True,
                                      help_text="Score recency, and read relative dates in the query "
                                                "(\"last week\", \"in May\"), as of this time "
                                                "(reproducible runs).")
    tiered = serializers.BooleanField(
        required=False, default=False,
        help_text="For broad questions: also answer with the summaries of the categories the best "
                  "memories belong to (data.category_summaries), before the items")
    track = serializers.BooleanField(required=False, default=True,
                                     help_text="Keep the recall event (query and reasons) and count "
                                               "the access (default). Every recall is audited either way.")

    def validate_weights(self, value):
        unknown = sorted(set(value) - set(SIGNALS))
        if unknown:
            raise serializers.ValidationError(f"Unknown signals: {', '.join(unknown)}.")
        return value

    def validate(self, data):
        if data.get("query_type") == "topic" and not data.get("topic"):
            raise serializers.ValidationError({"topic": ["Required for query_type=topic."]})
        return data


class SignalsSerializer(serializers.Serializer):
    semantic = serializers.FloatField()
    lexical = serializers.FloatField()
    exact = serializers.FloatField()
    tags = serializers.FloatField()
    recency = serializers.FloatField()
    confidence = serializers.FloatField()
    importance = serializers.FloatField()
    access = serializers.FloatField()
    time = serializers.FloatField(help_text="1 for a memory said within the time the query names "
                                            "(\"on 8 December 2023\", \"last week\"), less further off; "
                                            "0 when the query names no time")
    graph = serializers.FloatField(help_text="Linked by an edge to one of the strongest hits: the edge's "
                                             "strength × that hit's strength against the best (the "
                                             "rationale names the link); 0 when unlinked")


class ConflictSerializer(serializers.Serializer):
    with_ = serializers.CharField()
    shared_tags = serializers.ListField(child=serializers.CharField())
    subject = serializers.ListField(child=serializers.CharField())

    def get_fields(self):
        fields = super().get_fields()
        fields["with"] = fields.pop("with_")
        return fields


class RankedMemorySerializer(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField()
    title = serializers.CharField()
    summary = serializers.CharField()
    kind = serializers.CharField()
    memory_type = serializers.CharField()
    score = serializers.FloatField()
    signals = SignalsSerializer()
    rationale = serializers.CharField()
    highlights = serializers.ListField(child=serializers.CharField())
    conflict = ConflictSerializer(allow_null=True)
    # A declared field (DRF's metaclass moves it off the class), not Field.source; so are
    # `label` and `data` below, not Field.label and Serializer.data.
    source = serializers.DictField()  # type: ignore[assignment]
    version = serializers.IntegerField()
    tokens = serializers.IntegerField()


class FollowUpSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["create_new_memory_prefill", "clarify_conflict"])
    label = serializers.CharField()  # type: ignore[assignment]
    payload = serializers.DictField()


class CategorySummarySerializer(serializers.Serializer):
    space = serializers.CharField()
    name = serializers.CharField()
    display_name = serializers.CharField()
    summary = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField())


class RecallDataSerializer(serializers.Serializer):
    ranked_memory_list = RankedMemorySerializer(many=True)
    suggested_follow_up_actions = FollowUpSerializer(many=True)
    query_text = serializers.CharField(allow_blank=True)
    profile = serializers.CharField()
    spaces = serializers.ListField(child=serializers.CharField())
    candidates = serializers.IntegerField()
    trimmed = serializers.IntegerField()
    cached = serializers.BooleanField()
    tracked = serializers.BooleanField(
        help_text="Whether the recall event was kept and the access counted: false when the request "
                  "said track: false or a memory mode forbids traces (the audit row is written anyway)")
    silenced_spaces = serializers.ListField(
        child=serializers.CharField(),
        help_text="Requested spaces whose mode (capture_only, off) skips recall",
    )
    timings_ms = serializers.DictField(child=serializers.FloatField())
    category_summaries = CategorySummarySerializer(
        many=True, help_text="With tiered: the categories of the best memories, strongest first, each "
                             "with its summary and which of the recalled memories belong to it")


class UiSummarySerializer(serializers.Serializer):
    headline = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField())


class RecallOutputSerializer(serializers.Serializer):
    """The recall answer's envelope (docs/recall.md, "Request")."""

    action = serializers.CharField()
    ok = serializers.BooleanField()
    ui_summary = UiSummarySerializer()
    redaction_report = serializers.ListField(child=serializers.DictField())
    data = RecallDataSerializer()  # type: ignore[assignment]


class ContextPackInputSerializer(RecallInputSerializer):
    pack_type = serializers.ChoiceField(choices=["boot", "task"], default="task")
    k = serializers.IntegerField(required=False, min_value=1, max_value=50, default=12)
    token_budget = serializers.IntegerField(required=False, min_value=50, max_value=200000, default=1500)
    tiered = serializers.BooleanField(
        required=False, default=True,
        help_text="When the matching memories do not all fit the budget, begin with the summaries of "
                  "their categories (json.overview, at most 30% of the budget); false: items only")
    include_unvalidated = serializers.BooleanField(
        required=False, default=False,
        help_text="Also include memory cards whose checks failed or that went stale (left out by default; "
                  "validation_report names them either way)")


class ContextPackOutputSerializer(serializers.Serializer):
    json = serializers.DictField(help_text="The machine pack.")
    markdown = serializers.CharField(help_text="The same selection, for people and prompts.")


class PromptAugmentationInputSerializer(JSONInputSerializer):
    space = serializers.SlugField(max_length=80, help_text="The user's space.")
    message = serializers.CharField(
        required=False, allow_blank=True, max_length=4000, default="",
        help_text="The message being answered: relevance is scored against it.")
    max_items = serializers.IntegerField(required=False, min_value=1, max_value=50,
                                         default=augment.MAX_ITEMS)
    max_chars = serializers.IntegerField(required=False, min_value=100, max_value=8000,
                                         default=augment.MAX_CHARS,
                                         help_text="Characters of notes (headings, delimiters not counted).")
    max_summaries = serializers.IntegerField(required=False, min_value=0, max_value=10,
                                             default=augment.MAX_SUMMARIES)
    track = serializers.BooleanField(
        required=False, default=True,
        help_text="Count the notes put in as used (default), so they do not decay as if unused. "
                  "Not counted in paused or incognito mode whatever this says.")


class AugmentationNoteSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.CharField()
    category = serializers.CharField()
    priority = serializers.CharField()
    reason = serializers.ChoiceField(choices=["core", "priority", "relevance", "summary"])
    score = serializers.FloatField(help_text="Relevance to the message (0 when not scored)")
    neutralised = serializers.BooleanField(help_text="Something in the note was defused")
    defused = serializers.ListField(child=serializers.CharField(),
                                    help_text="What was neutralised (docs/security.md, stored text "
                                              "handed to models)")


class PromptAugmentationOutputSerializer(serializers.Serializer):
    block = serializers.CharField(
        allow_blank=True, help_text="Put in the system prompt as it is; empty when there is nothing.")
    notes = AugmentationNoteSerializer(many=True)
    chars = serializers.IntegerField(help_text="Characters of notes in the block")
    left_out = serializers.IntegerField(help_text="Candidate notes that did not fit the limits")
    silenced = serializers.BooleanField(help_text="The memory mode keeps this space out of recall")
    tracked = serializers.BooleanField(
        help_text="Whether the notes put in were counted as used: false when the request said "
                  "track: false or a memory mode forbids traces (paused, incognito)")
