"""What a call returns: content, responses and their builder, failures, state sync, style,
masking, omission, redaction and the Presenter.
"""
