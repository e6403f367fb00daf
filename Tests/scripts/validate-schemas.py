#!/usr/bin/env python3
"""Checks Protocol/schemas and the transcripts against each other.

1. Every file in Protocol/schemas is a valid JSON Schema (draft 2020-12).
2. Every JSON body the live server sent while the transcripts were replayed
   (written by ProtocolTranscriptTests to .build/schema-samples/) validates
   against the schema the transcript names with `# schema: Name`.
3. Every client body a transcript marks with `# request-schema: Name`
   validates too (captured `{$name}` values are replaced by a placeholder).

Exits non-zero on any failure, or when there is nothing to validate.
"""
import json, pathlib, re, sys

try:
    import jsonschema
    from referencing import Registry, Resource
    import yaml, openapi_spec_validator  # noqa: F401
except ImportError:
    sys.exit("validate-schemas: needs jsonschema, pyyaml and openapi-spec-validator (pip install ...)")

root = pathlib.Path(__file__).resolve().parents[2]
schema_dir = root / "Protocol" / "schemas"
samples_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / ".build" / "schema-samples"

schemas = {}
for path in sorted(schema_dir.glob("*.json")):
    doc = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(doc)
    schemas[path.stem] = doc
registry = Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in schemas.values())

failures, checked = [], 0

def check(name, text, where):
    global checked
    if name not in schemas:
        failures.append(f"{where}: no schema named {name}")
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        failures.append(f"{where}: not JSON ({error}): {text[:120]}")
        return
    validator = jsonschema.Draft202012Validator(schemas[name], registry=registry)
    for error in validator.iter_errors(value):
        failures.append(f"{where}: {name}: {error.message} at {list(error.absolute_path)}")
    checked += 1

samples = sorted(samples_dir.glob("*.json")) if samples_dir.exists() else []
for path in samples:
    for sample in json.loads(path.read_text()):
        check(sample["schema"], sample["json"], sample["location"])
server_samples = checked

for path in sorted((root / "Protocol" / "examples").glob("*.transcript")):
    lines = path.read_text().splitlines()
    pending = None
    for number, line in enumerate(lines, 1):
        if line.startswith("# request-schema: "):
            pending = (line.split(": ", 1)[1].strip(), number)
            continue
        if pending and line.startswith("C> text "):
            body = re.sub(r"\{\$[A-Za-z0-9_]+\}", "placeholder-value", line[len("C> text "):])
            body = re.sub(r"\{now\+-?[0-9]+\}", "1800000000", body)  # a time N seconds from now
            check(pending[0], body, f"{path.name}:{number}")
            pending = None
        elif pending and line.startswith("C: ") and line[3:].lstrip().startswith(("{", "[")):
            body = re.sub(r"\{\$[A-Za-z0-9_]+\}", "placeholder-value", line[3:])
            check(pending[0], body, f"{path.name}:{number}")
            pending = None

# 4. The OpenAPI and AsyncAPI documents: OpenAPI validated, and every $ref
#    to a schema file in either document names a file that exists.
import yaml
from openapi_spec_validator import validate as validate_openapi
from openapi_spec_validator.readers import read_from_filename
spec, _ = read_from_filename(str(root / "Protocol" / "openapi.yaml"))
validate_openapi(spec, base_uri=(root / "Protocol" / "openapi.yaml").as_uri())
for document in ("openapi.yaml", "spotter.asyncapi.yaml"):
    text = (root / "Protocol" / document).read_text()
    yaml.safe_load(text)
    for target in re.findall(r"schemas/([A-Za-z0-9]+)\.json", text):
        if target not in schemas:
            failures.append(f"{document}: refers to schemas/{target}.json, which does not exist")

print(f"validate-schemas: {len(schemas)} schemas valid; openapi.yaml valid; {server_samples} server bodies and "
      f"{checked - server_samples} client bodies checked; {len(failures)} failures")
for failure in failures:
    print("  " + failure)
if server_samples == 0:
    sys.exit("validate-schemas: no server samples found in " + str(samples_dir) + " (run swift test first)")
sys.exit(1 if failures else 0)
