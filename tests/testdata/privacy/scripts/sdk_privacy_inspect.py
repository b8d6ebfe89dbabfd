"""Print what a privacy capture's .pb / .logs.pb files hold (spans with attributes, events, status; log records)."""

import glob
import os
import sys

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _val(v: dict) -> object:
    if not v:
        return None
    (k, x), = v.items()
    if k == "arrayValue":
        return [_val(i) for i in x.get("values", [])]
    if k == "kvlistValue":
        return {i["key"]: _val(i.get("value", {})) for i in x.get("values", [])}
    return x


for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.pb"))):
    print("=" * 20, os.path.basename(path))
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".logs.pb"):
        req = ExportLogsServiceRequest.FromString(data)
        for rl in MessageToDict(req).get("resourceLogs", []):
            for sl in rl.get("scopeLogs", []):
                for r in sl.get("logRecords", []):
                    attrs = {a["key"]: _val(a.get("value", {})) for a in r.get("attributes", [])}
                    print(f"  LOG scope={sl['scope'].get('name')} event_name={r.get('eventName')} "
                          f"span={r.get('spanId')}")
                    print(f"      attrs={attrs}\n      body={_val(r.get('body', {}))}")
        continue
    req = ExportTraceServiceRequest.FromString(data)
    for rs in MessageToDict(req).get("resourceSpans", []):
        print("resource:", {a["key"]: _val(a["value"]) for a in rs["resource"].get("attributes", [])
                            if a["key"] == "service.name"})
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                print(f"  SPAN '{s['name']}' scope={ss['scope'].get('name')} {ss['scope'].get('version', '')} "
                      f"schema={ss.get('schemaUrl', '')} kind={s.get('kind')} status={s.get('status')}")
                for a in s.get("attributes", []):
                    print(f"      {a['key']} = {_val(a.get('value', {}))!r}")
                for e in s.get("events", []):
                    ev_attrs = [(a["key"], _val(a.get("value", {}))) for a in e.get("attributes", [])]
                    print(f"      EVENT {e['name']} {ev_attrs}"[:600])
