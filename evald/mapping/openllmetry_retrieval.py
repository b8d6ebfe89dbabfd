"""Retrieved documents in OpenLLMetry traces -> ``Document`` (id, content, score, metadata).

Reads, per span in start order:

* vector-DB result events (chroma, pinecone, qdrant, milvus, weaviate, lancedb ... instrumentations):
  ``db.query.result`` with ``db.query.result.id|score|distance|document|metadata`` and ``db.search.result`` with
  ``db.search.result.id|score|distance|entity``, plus the older ``db.chromadb.query.result`` /
  ``db.pinecone.query.result`` / ``vector_db.query.result`` (``...{i}.ids|distances|documents|metadata``) forms.
  A value is one item or an array (zipped by position). A distance is not a similarity: it stays in
  ``metadata["distance"]`` and ``score`` is left unset;
* the same ``db.query.result.*`` keys set as span attributes (some search-service instrumentations);
* ``gen_ai.retrieval.documents`` (OTel GenAI retrieval spans, 0.54+ emitters);
* documents in Traceloop entity outputs of non-LLM spans: LangChain ``Document`` objects (``page_content``),
  ``[Document, score]`` pairs, LlamaIndex ``NodeWithScore`` (``node.text``, ``score``), Haystack documents in a
  pipeline's per-component outputs (``{"retriever": {"documents": [...]}}``) and lists of plain dicts
  with a text field (``text``/``content``/``document``/``chunk``) plus an id, score or metadata (what a
  ``@task``-decorated retrieval function returns); also a chain's ``input_documents`` input, and a step whose
  input is a list of LangChain ``Document`` objects (the retriever before it untraced). A list counts only
  when every item is a document. A score missing on the item is taken from its metadata (``score``, ...).

Duplicates (the same document seen by a retriever task and its vector-DB span) are merged by id, else by text.
Malformed items are skipped; nothing raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from evald import semconv as sc
from evald.case import Document
from evald.frozen import replace
from evald.mapping.case_parts import SCORE_KEYS
from evald.mapping.openllmetry_attrs import ENTITY_INPUT, ENTITY_OUTPUT
from evald.mapping.openllmetry_entities import LC_CLASS, DecodeMemo, decode_once
from evald.mapping.values import as_dict, as_float, as_list, as_str, as_text, documents, is_mapping, plain
from evald.model import SpanRecord

_RESULT_EVENT_SUFFIXES: Final = (".query.result", ".search.result")
_FIELDS: Final = {"id": "id", "ids": "id", "score": "score", "scores": "score", "distance": "distance",
                  "distances": "distance", "document": "content", "documents": "content", "entity": "content",
                  "text": "content", "content": "content", "metadata": "metadata", "metadatas": "metadata"}
_DOC_LIST_KEYS: Final = ("documents", "docs", "source_documents", "input_documents", "source_nodes", "nodes",
                         "context", "outputs", "output")
# a plain dict is a document only with text and one of these (a bare {"text": ...} may be anything)
_DOC_MARKERS: Final = ("id", "id_", "doc_id", "document_id", "score", "metadata")
_DIGITS: Final = re.compile(r"\.(\d+)\.")


def trace_documents(spans: Sequence[SpanRecord], skip: frozenset[str], warnings: list[str],
                    memo: DecodeMemo | None = None) -> tuple[Document, ...]:
    """Every retrieved document of the trace, in span order (``skip``: ids of LLM spans, whose content is prompts;
    ``memo``: the payloads the trace case already decoded)."""
    found: list[Document] = []
    for span in spans:
        if span.span_id in skip:
            continue
        try:
            found.extend(span_documents(span, warnings, memo))
        except Exception as err:  # garbage must never escape a mapper
            warnings.append(f"span {span.span_id}: unreadable retrieval data ({type(err).__name__})")
    return tuple(_merged(found))


def span_documents(span: SpanRecord, warnings: list[str], memo: DecodeMemo | None = None) -> list[Document]:
    attrs = plain(span.attributes)  # read as a dict (compiled: direct calls, no method lookup)
    docs: list[Document] = []
    for event in span.events:
        if event.name.endswith(_RESULT_EVENT_SUFFIXES):
            docs.extend(result_documents(event.attributes))
    keys: dict[Any, Any] = attrs  # typed Any: compiled code checks no key's type
    if any(isinstance(k, str) and k.startswith("db.query.result.") for k in keys):
        docs.extend(result_documents({k: v for k, v in attrs.items() if k.startswith("db.query.result.")}))
    raw = attrs.get(sc.RETRIEVAL_DOCUMENTS)
    if raw is not None:
        listed = documents(raw)
        if listed is None:
            warnings.append(f"span {span.span_id}: {sc.RETRIEVAL_DOCUMENTS} is not a list")
        docs.extend(listed or ())
    if not docs and ENTITY_OUTPUT in attrs:
        docs.extend(entity_documents(decode_once(attrs[ENTITY_OUTPUT], memo)))
    raw_input = attrs.get(ENTITY_INPUT)
    if not docs and raw_input is not None and (
            not isinstance(raw_input, str) or "document" in raw_input or "Document" in raw_input):
        data = decode_once(raw_input, memo)
        inputs = data.get("inputs") if is_mapping(data) else None
        if is_mapping(inputs):
            docs.extend(entity_documents({k: v for k, v in inputs.items() if k in ("input_documents", "documents")}))
        elif isinstance(inputs, list) and inputs and all(
                is_mapping(item) and item.get(LC_CLASS) == "Document" for item in inputs):
            docs.extend(entity_documents(inputs))  # a step fed by an untraced retriever (OpenLLMetry < 0.48)
    return docs


def result_documents(attrs: Mapping[str, Any]) -> list[Document]:
    """Documents of one vector-DB result event (or attribute group): fields grouped by their index segment."""
    groups: dict[str, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not isinstance(key, str):
            continue
        field = _FIELDS.get(key.rsplit(".", 1)[-1])
        if field is None:
            continue
        group = groups.setdefault(".".join(_DIGITS.findall(key)), {})
        group[field] = value
    docs: list[Document] = []
    for _, fields in sorted(groups.items()):
        columns = {k: _column(k, v) for k, v in fields.items()}
        count = max((len(c) for c in columns.values()), default=0)
        for i in range(count):
            row = {k: c[i] if i < len(c) else None for k, c in columns.items()}
            if (doc := _row_document(row)) is not None:
                docs.append(doc)
    return docs


def _column(field: str, value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    if field in ("metadata", "content") and isinstance(value, str):
        parsed = as_list(value)  # a JSON array of metadata dicts / documents
        if parsed is not None and (field == "content" or all(is_mapping(p) for p in parsed)):
            return parsed
    return [value]


def _row_document(row: Mapping[str, Any]) -> Document | None:
    content = row.get("content")
    entity = as_dict(content) if not isinstance(content, str) or content.lstrip().startswith("{") else None
    text = _content_text(entity) if entity is not None else as_text(content)
    metadata = as_dict(row.get("metadata")) or (as_dict(entity.get("metadata")) if entity else None)
    distance = as_float(row.get("distance"))
    if distance is not None:
        metadata = {**(metadata or {}), "distance": distance}
    doc_id = as_str(row.get("id")) or (as_str(entity.get("id")) if entity else None)
    score = as_float(row.get("score"))
    if doc_id is None and text is None and score is None:
        return None
    return Document(id=doc_id, content=text, score=score, metadata=metadata)


def _content_text(data: Mapping[str, Any]) -> str | None:
    text = next((t for k in ("page_content", "text", "content", "document", "chunk") if (t := as_text(data.get(k)))),
                None)
    if text is not None:
        return text
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return None


def entity_documents(value: Any, depth: int = 0) -> list[Document]:
    """LangChain / LlamaIndex documents in a decoded entity payload (a list of them, or under a list key)."""
    if depth > 4:
        return []
    if isinstance(value, list):
        docs = [d for item in value if (d := _object_document(item)) is not None]
        return docs if docs and len(docs) == len(value) else []
    if is_mapping(value):
        for key in _DOC_LIST_KEYS:
            if key in value and (docs := entity_documents(value[key], depth + 1)):
                return docs
        for inner in value.values():  # a pipeline's outputs per component (Haystack: {"retriever": {...}})
            if is_mapping(inner) and any(k in inner for k in _DOC_LIST_KEYS) and (
                    docs := entity_documents(inner, depth + 1)):
                return docs
    return []


def _object_document(item: Any) -> Document | None:
    score: float | None = None
    if isinstance(item, list) and len(item) == 2 and as_float(item[1]) is not None:  # (Document, score)
        item, score = item[0], as_float(item[1])
    if not is_mapping(item):
        return None
    node = item.get("node")
    if is_mapping(node):  # LlamaIndex NodeWithScore
        score = as_float(item.get("score")) if score is None else score
        item = node
    text = as_text(item.get("page_content")) if "page_content" in item else None
    if "role" in item or (isinstance(cls := item.get(LC_CLASS), str) and cls.endswith(("Message", "MessageChunk"))):
        return None  # chat messages, not documents
    marked = is_mapping(node) or bool(item.get(LC_CLASS)) or any(k in item for k in _DOC_MARKERS)
    if text is None and marked:
        text = next((t for k in ("text", "content", "document", "chunk") if (t := as_text(item.get(k)))), None)
    if text is None:
        return None
    metadata = as_dict(item.get("metadata"))
    doc_id = next((i for k in ("id", "id_", "doc_id", "document_id") if (i := as_str(item.get(k)))), None) or (
        as_str(metadata.get("id")) if metadata else None)
    if score is None:
        score = as_float(item.get("score"))
    if score is None and metadata:  # what a retriever without scores of its own put in the metadata
        score = next((s for k in SCORE_KEYS if (s := as_float(metadata.get(k))) is not None), None)
    return Document(id=doc_id, content=text, score=score, metadata=metadata)


def _merged(docs: Iterable[Document]) -> list[Document]:
    out: list[Document] = []
    index: dict[tuple[str, str], int] = {}
    for doc in docs:
        keys: list[tuple[str, str]] = []
        if doc.id is not None:
            keys.append(("id", doc.id))
        if doc.content is not None:
            keys.append(("text", doc.content))
        hit = next((index[k] for k in keys if k in index), None)
        if hit is None:
            hit = len(out)
            out.append(doc)
        else:
            old = out[hit]
            out[hit] = replace(old, id=old.id or doc.id, content=old.content or doc.content,
                               score=old.score if old.score is not None else doc.score,
                               metadata=old.metadata or doc.metadata)
        for key in keys:
            index.setdefault(key, hit)
    return out
