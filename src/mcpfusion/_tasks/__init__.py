"""Tasks (SEP-2663): where task state lives, and how a task's call runs."""
