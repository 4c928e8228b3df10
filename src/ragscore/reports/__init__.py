"""Report formats: each module renders the report document; none of them computes."""
