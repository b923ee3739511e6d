"""SPEC §1-§8 as text: tags, escaping, the parts value, the parser, repair and the data block
(imports only ``_errors``).
"""
