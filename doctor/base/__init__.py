"""The floor every stage stands on, importing nothing of the doctor's: the vocabulary, documents to and from
JSON, bounded reading, quoting, redaction, deadlines and child processes."""
