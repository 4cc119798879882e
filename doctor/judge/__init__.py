"""The judging stage: checks and how they are found and run, findings, rules, the policy of a run, and the
words a finding says of a measurement."""
