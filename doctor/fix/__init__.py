"""``paddle-doctor fix``: the measured recommendation and the failing findings' fixes, applied to the service's
own files at the origin of each setting, as a reviewable unified diff (``--write`` applies it)."""
