"""Internal utilities (validation)."""
