"""The tlop standard library: .tlop models and bundled platform profiles (data only)."""
