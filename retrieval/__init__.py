"""Recall: hybrid retrieval, scoring with rationales, and context packs."""
