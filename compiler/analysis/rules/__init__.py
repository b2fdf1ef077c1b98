"""Rewrite rules as data: the rule type and matcher (:mod:`.core`), computed rules
(:mod:`.computed`), the catalogue (:mod:`.catalogue`) and the CLI glue (:mod:`.cli`)."""

from tlop.analysis.rules.core import Rule, match, substitute
from tlop.analysis.rules.catalogue import RULES, FAMILIES, MODEL_FAMILIES, rules_by_name

__all__ = ["Rule", "match", "substitute", "RULES", "FAMILIES", "MODEL_FAMILIES", "rules_by_name"]
