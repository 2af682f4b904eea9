"""pipeline/postprocess."""
