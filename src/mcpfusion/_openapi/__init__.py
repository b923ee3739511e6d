"""OpenAPI documents served as grouped, presented tools (the ``mcpfusion.openapi`` façade)."""
