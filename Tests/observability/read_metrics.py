"""Reads a Prometheus text exposition from standard input with Prometheus's
own Python parser (prometheus_client) and prints its samples as JSON:
[[name, {label: value}, value], ...]. Exits non-zero, saying why, when the
parser refuses the text or a metric family is declared twice."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
samples = []
families = set()
try:
    for family in text_string_to_metric_families(text):
        if family.name in families:
            sys.exit(f"metric family {family.name} declared twice")
        families.add(family.name)
        for sample in family.samples:
            samples.append([sample.name, sample.labels, sample.value])
except ValueError as error:
    sys.exit(f"not valid Prometheus text: {error}")
json.dump(samples, sys.stdout)
