"""The fleet view: many pods' ``--json`` reports grouped by the findings and facts that matter, with
the pods that differ from the usual group named and what differs.

``reports`` reads reports (files, or collected by ``kubernetes``), ``grouping`` builds the fleet
report, ``render`` prints it, ``command`` is ``paddle-doctor fleet``.
"""
